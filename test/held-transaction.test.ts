// The group-committed writers' transactions on a held connection (src/db/held-transaction.ts),
// on the suite's database: what a MikroORM transaction promised them still holds (all or
// nothing, the commit hooks after the commit, the rollback hooks after a failure), in two round
// trips, and the ORM cannot be used inside one by mistake.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { expect } from 'chai';
import { MessageSchema } from '../src/db/entities/index.ts';
import { heldConnection, heldTransaction } from '../src/db/held-transaction.ts';
import { prepared } from '../src/db/prepared.ts';
import { sharedServer } from './support/server.ts';

describe('held transactions', () => {
  const table = `held_${randomBytes(4).toString('hex')}`;
  const orm = () => sharedServer().deps.db.orm;
  const em = () => orm().em.fork();
  const rows = async () =>
    (await em().getConnection().execute<Array<{ id: number }>>(`select id from ${table} order by id`)).map((r) => r.id);
  const insert = (tx: EntityManager, id: number | null, commit = false) =>
    prepared(tx, `insert into ${table} (id) values (?::int)`, [id], { commit });
  /** What the ORM's transaction subscribers saw, of this file's transactions only. */
  const ours = new WeakSet<object>();
  const events: Array<{ event: 'commit' | 'rollback'; em: object; written: number[] }> = [];
  /** Round trips counted until a hook runs (its own query may take the same pooled connection). */
  let counting = false;

  before(async () => {
    await em().getConnection().execute(`create table ${table} (id int not null primary key)`);
    orm()
      .em.getEventManager()
      .registerSubscriber({
        // What is visible from another connection when the hook runs: committed, or not at all.
        afterTransactionCommit: async ({ em: tx }) => {
          counting = false;
          if (ours.has(tx)) events.push({ event: 'commit', em: tx, written: await rows() });
        },
        afterTransactionRollback: async ({ em: tx }) => {
          if (ours.has(tx)) events.push({ event: 'rollback', em: tx, written: await rows() });
        },
      });
  });
  after(async () => {
    await em().getConnection().execute(`drop table ${table}`);
  });
  beforeEach(async () => {
    await em().getConnection().execute(`delete from ${table}`);
    events.length = 0;
  });

  it('commits its statements in two round trips, then calls the commit hooks with its EntityManager', async () => {
    let roundTrips = 0;
    let seen: object | undefined;
    const result = await heldTransaction(em(), async (tx) => {
      ours.add(tx);
      seen = tx;
      const wire = (heldConnection(tx) as unknown as { connection: { on(e: 'readyForQuery', l: () => void): void } }).connection;
      counting = true;
      wire.on('readyForQuery', () => {
        if (counting) roundTrips++;
      });
      await insert(tx, 1);
      await insert(tx, 2, true);
      return 'done';
    });
    expect(result).to.equal('done');
    expect(roundTrips).to.equal(2);
    expect(await rows()).to.deep.equal([1, 2]);
    expect(events).to.deep.equal([{ event: 'commit', em: seen, written: [1, 2] }]);
  });

  it('commits without a statement carrying the COMMIT, and sends nothing for an empty one', async () => {
    await heldTransaction(em(), async (tx) => {
      await insert(tx, 1);
    });
    await heldTransaction(em(), () => Promise.resolve());
    expect(await rows()).to.deep.equal([1]);
  });

  it('writes nothing when its work fails, rethrows the error, and calls the rollback hooks', async () => {
    const failed = await heldTransaction(em(), async (tx) => {
      ours.add(tx);
      await insert(tx, 1);
      await insert(tx, 1, true);
    }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failed).to.be.instanceOf(Error);
    expect((failed as Error).name).to.equal('UniqueConstraintViolationException');
    expect(await rows()).to.deep.equal([]);
    expect(events.map((e) => [e.event, e.written])).to.deep.equal([['rollback', []]]);
    // The connection went back to the pool usable.
    await heldTransaction(em(), (tx) => insert(tx, 3, true));
    expect(await rows()).to.deep.equal([3]);
  });

  it('refuses the ORM inside (it would run outside the transaction), and rolls back', async () => {
    const failed = await heldTransaction(em(), async (tx) => {
      await insert(tx, 1);
      await tx.find(MessageSchema, { id: 1 });
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
});
