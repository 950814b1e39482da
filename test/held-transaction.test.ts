// The transaction object (src/db/tx/), on the suite's database. The group-committed writers'
// transactions on a held connection (held.ts): all or nothing, in two round trips, the ORM
// refused inside, and what they recorded (notices, hand-offs) returned only once committed. The
// ordinary runner (run.ts): what a transaction recorded reaches the gateway after its commit,
// and never when it rolls back; the deliveries a transaction leased reach the worker only through its runner.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type pg from 'pg';
import type { AnyNotice } from '../src/conversations/notices.ts';
import { notify } from '../src/conversations/notices.ts';
import { MessageSchema } from '../src/db/entities/index.ts';
import { prepared } from '../src/db/prepared.ts';
import { heldTransaction } from '../src/db/tx/held.ts';
import { outletsOf } from '../src/db/tx/outlets.ts';
import { transaction } from '../src/db/tx/run.ts';
import type { Committed, Transaction } from '../src/db/tx/transaction.ts';
import { enqueueAll } from '../src/deliveries/outbox.ts';
import { waitForState } from './support/deliveries.ts';
import { sharedServer } from './support/server.ts';
import { tenant } from './support/tenant.ts';

describe('held transactions', () => {
  const table = `held_${randomBytes(4).toString('hex')}`;
  const orm = () => sharedServer().deps.db.orm;
  const em = () => orm().em.fork();
  const rows = async () =>
    (await em().getConnection().execute<Array<{ id: number }>>(`select id from ${table} order by id`)).map((r) => r.id);
  const insert = (tx: Transaction, id: number | null, commit = false) =>
    prepared(tx, `insert into ${table} (id) values (?::int)`, [id], { commit });
  /** Notices that reached this node's gateway from this file's transactions, with the rows visible then. */
  const published: Array<{ notice: AnyNotice; written: Promise<number[]> }> = [];
  let restore: (() => void) | undefined;
  const ours = (notice: AnyNotice) => notice.kind === 'account' && notice.accountId < 0;

  before(async () => {
    await em().getConnection().execute(`create table ${table} (id int not null primary key)`);
    // The gateway stays connected; its notices are seen on their way to it.
    const outlets = outletsOf(orm().em);
    const gateway = outlets.gateway;
    outlets.gateway = {
      publish(notice) {
        if (ours(notice)) published.push({ notice, written: rows() });
        else gateway?.publish(notice);
      },
    };
    restore = () => (outlets.gateway = gateway);
  });
  after(async () => {
    restore?.();
    await em().getConnection().execute(`drop table ${table}`);
  });
  beforeEach(async () => {
    await em().getConnection().execute(`delete from ${table}`);
    published.length = 0;
  });

  it('commits its statements in two round trips, then returns what it recorded', async () => {
    let roundTrips = 0;
    let counting = false;
    const { result, committed } = await heldTransaction(em(), async (tx) => {
      // The pg client goes idle ('drain') once per round trip: its queries are all answered.
      counting = true;
      (tx.connection as unknown as pg.Client).on('drain', () => {
        if (counting) roundTrips++;
      });
      notify(tx, { kind: 'account', accountId: -1 });
      tx.markDue();
      await insert(tx, 1);
      await insert(tx, 2, true);
      return 'done';
    });
    counting = false;
    expect(result).to.equal('done');
    expect(roundTrips).to.equal(2);
    expect(await rows()).to.deep.equal([1, 2]);
    expect(committed).to.deep.equal({ notices: [{ kind: 'account', accountId: -1 }], handoffs: [], due: true } satisfies Committed);
  });

  it('commits without a statement carrying the COMMIT, and sends nothing for an empty one', async () => {
    await heldTransaction(em(), async (tx) => {
      await insert(tx, 1);
    });
    await heldTransaction(em(), () => Promise.resolve());
    expect(await rows()).to.deep.equal([1]);
  });

  it('writes nothing when its work fails, and rethrows the error', async () => {
    const failed = await heldTransaction(em(), async (tx) => {
      notify(tx, { kind: 'account', accountId: -1 });
      await insert(tx, 1);
      await insert(tx, 1, true);
    }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failed).to.be.instanceOf(Error);
    expect((failed as Error).name).to.equal('UniqueConstraintViolationException');
    expect(await rows()).to.deep.equal([]);
    // The connection went back to the pool usable.
    await heldTransaction(em(), (tx) => insert(tx, 3, true));
    expect(await rows()).to.deep.equal([3]);
  });

  it('refuses the ORM inside (it would run outside the transaction), and rolls back', async () => {
    const failed = await heldTransaction(em(), async (tx) => {
      await insert(tx, 1);
      await tx.em.find(MessageSchema, { id: 1 });
    }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(String(failed)).to.match(/ORM call inside a held transaction.*use prepared\(\)/);
    expect(await rows()).to.deep.equal([]);
  });

  it('drops a connection that broke during the transaction; the next transaction gets a sound one', async function () {
    if (sharedServer().deps.db.embedded) return this.skip(); // one connection, which cannot be killed from another
    const failed = await heldTransaction(em(), async (tx) => {
      const [{ pid }] = (await prepared<{ pid: number }>(tx, 'select pg_backend_pid() as pid', [])) as [{ pid: number }];
      await em().getConnection().execute('select pg_terminate_backend(?)', [pid]);
      await insert(tx, 1, true);
    }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failed).to.be.instanceOf(Error);
    for (let i = 0; i < 3; i++) await heldTransaction(em(), (tx) => insert(tx, 10 + i, true));
    expect(await rows()).to.deep.equal([10, 11, 12]);
  });

  it('plans its statements generically, and leaves the connection planning as PostgreSQL chooses', async () => {
    const mode = async (on: Parameters<typeof prepared>[0]) =>
      (await prepared<{ mode: string }>(on, `select current_setting('plan_cache_mode') as mode`, []))[0]?.mode;
    const { result } = await heldTransaction(em(), (tx) => mode(tx));
    expect(result).to.equal('force_generic_plan');
    // SET LOCAL ends with the transaction (on the embedded database this is the same connection).
    expect(await mode(em())).to.equal('auto');
  });

  it('hands its notices to the gateway after the commit, in order, and none when it rolls back', async () => {
    await transaction(em(), async (tx) => {
      await insert(tx, 1);
      notify(tx, { kind: 'account', accountId: -1 }, { kind: 'account', accountId: -2 });
    });
    const failed = await transaction(em(), async (tx) => {
      await insert(tx, 2);
      notify(tx, { kind: 'account', accountId: -3 });
      throw new Error('the change fails');
    }).catch((err: Error) => err.message);
    expect(failed).to.equal('the change fails');
    await transaction(em(), (tx) => {
      notify(tx, { kind: 'account', accountId: -4 });
      return Promise.resolve();
    });
    // Handed on before transaction() resolved, each seeing its transaction's rows committed; the rolled-back one never came.
    const seen = await Promise.all(published.map(async ({ notice, written }) => ({ notice, written: await written })));
    expect(seen).to.deep.equal([
      { notice: { kind: 'account', accountId: -1 }, written: [1] },
      { notice: { kind: 'account', accountId: -2 }, written: [1] },
      { notice: { kind: 'account', accountId: -4 }, written: [1] },
    ]);
  });

  it('refuses to run inside another transaction (its notices would go out before the outer commit)', async () => {
    const failed = await em()
      .transactional((inner) => transaction(inner, () => Promise.resolve()))
      .catch((err: Error) => err.message);
    expect(failed).to.match(/inside a transaction/);
  });

  it('carries the deliveries it leased to this node, handed to the worker only by the runner after the commit', async () => {
    const t = await tenant();
    try {
      const request = { kind: 'event' as const, payload: { n: 1 }, recipients: [t.service.id], orderingKey: null };
      const { result, committed } = await heldTransaction(em(), (tx) => enqueueAll(tx, [request]));
      const [id] = result[0] ?? [];
      // Leased to this node's worker in the insert, and nothing has taken it over yet.
      expect(committed.handoffs.map((d) => d.id)).to.deep.equal([id]);
      const [leased] = await em()
        .getConnection()
        .execute<Array<{ claimed_by: string | null }>>('select claimed_by from deliveries where id = ?', [id]);
      expect(leased?.claimed_by).to.equal(sharedServer().deps.deliveries?.node);
      expect(t.receiver.requests).to.have.length(0);
      // The plain call a runner makes: the worker sends it at once, without a claim.
      outletsOf(orm().em).deliver(committed);
      await waitForState(sharedServer(), id ?? '', 'delivered');
      expect(t.receiver.requests).to.have.length(1);
    } finally {
      await t.receiver.close();
    }
  });
});
