// Shared transactions (src/db/tx/shared.ts): the group-committed writers' batches of the moment
// in one transaction, their statements sharing round trips, the COMMIT with the last work's last
// statement; batches with a user in common never together; a work that fails fails alone. Then
// the node's writers: on the embedded database a client batch and an agent batch of the moment
// are one transaction; on PostgreSQL each writer keeps its own.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type pg from 'pg';
import type { AgentMessageInput } from '../src/conversations/agents.ts';
import type { ClientMessage } from '../src/conversations/client-messages.ts';
import type { AnyNotice } from '../src/conversations/notices.ts';
import { notify } from '../src/conversations/notices.ts';
import { AccountSchema, DeviceSchema, UserSchema } from '../src/db/entities/index.ts';
import { prepared } from '../src/db/prepared.ts';
import { outletsOf } from '../src/db/tx/outlets.ts';
import { SharedTransactions } from '../src/db/tx/shared.ts';
import type { Transaction } from '../src/db/tx/transaction.ts';
import { createLogger } from '../src/logger.ts';
import { sharedServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

describe('shared transactions', () => {
  const table = `shared_${randomBytes(4).toString('hex')}`;
  const orm = () => sharedServer().deps.db.orm;
  const em = () => orm().em.fork();
  const logger = createLogger({ logLevel: 'silent' });
  /** Each row with the transaction that wrote it. */
  const rows = async () =>
    (await em().getConnection().execute<Array<{ id: number; xid: string }>>(`select id, xid::text as xid from ${table} order by id`)).map(
      (r) => ({ id: r.id, xid: r.xid }),
    );
  const insert = (tx: Transaction, id: number, commit = false) =>
    prepared(tx, `insert into ${table} (id) values (?::int)`, [id], { commit });
  const published: AnyNotice[] = [];
  let restore: (() => void) | undefined;
  const ours = (notice: AnyNotice) => notice.kind === 'account' && notice.accountId < 0;

  before(async () => {
    await em().getConnection().execute(`create table ${table} (id int not null primary key, xid bigint not null default txid_current())`);
    const outlets = outletsOf(orm().em);
    const gateway = outlets.gateway;
    outlets.gateway = {
      publish(notice) {
        if (ours(notice)) published.push(notice);
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

  it('runs the works of the moment in one transaction of two round trips, and hands on their notices once it committed', async () => {
    const shared = new SharedTransactions(em, logger);
    let roundTrips = 0;
    let counted: pg.Client | undefined;
    const work = (n: number) => async (tx: Transaction) => {
      if (!counted) {
        // The pg client goes idle ('drain') once its queries are all answered: at most once a round trip.
        counted = tx.connection as unknown as pg.Client;
        counted.on('drain', () => roundTrips++);
      }
      notify(tx, { kind: 'account', accountId: -n });
      await insert(tx, n);
      // Nothing is handed on before the commit.
      expect(published).to.deep.equal([]);
      await insert(tx, 100 + n, true);
      return n;
    };
    const results = await Promise.all([1, 2, 3].map((n) => shared.run([n], work(n))));
    counted?.removeAllListeners('drain');
    expect(results).to.deep.equal([1, 2, 3]);
    const written = await rows();
    expect(written.map((r) => r.id)).to.deep.equal([1, 2, 3, 101, 102, 103]);
    expect(new Set(written.map((r) => r.xid)).size).to.equal(1);
    // Alone, each would take two: six. Together the first statements share one, the last ones (and the COMMIT) another.
    expect(roundTrips).to.be.within(1, 2);
    expect(published).to.have.deep.members([1, 2, 3].map((n) => ({ kind: 'account', accountId: -n })));
  });

  it('never puts works with a user in common in one transaction; they keep the order they came in', async () => {
    const shared = new SharedTransactions(em, logger);
    const work = (id: number) => (tx: Transaction) => insert(tx, id, true);
    await Promise.all([shared.run([7, 8], work(1)), shared.run([8], work(2)), shared.run([9], work(3))]);
    const [first, second, third] = await rows();
    expect(first?.xid).to.equal(third?.xid);
    expect(Number(second?.xid)).to.be.above(Number(first?.xid));
  });

  it('fails only the work that fails: the others are written again, each in a transaction of its own', async () => {
    await em().getConnection().execute(`insert into ${table} (id) values (50)`);
    const shared = new SharedTransactions(em, logger);
    const outcomes = await Promise.allSettled([
      shared.run([1], async (tx) => {
        notify(tx, { kind: 'account', accountId: -1 });
        await insert(tx, 1);
        await insert(tx, 11, true);
      }),
      // Its last statement breaks the transaction the three shared.
      shared.run([2], async (tx) => {
        notify(tx, { kind: 'account', accountId: -2 });
        await insert(tx, 2);
        await insert(tx, 50, true);
      }),
      shared.run([3], async (tx) => {
        notify(tx, { kind: 'account', accountId: -3 });
        await insert(tx, 3, true);
      }),
    ]);
    expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(((outcomes[1] as PromiseRejectedResult).reason as Error).name).to.equal('UniqueConstraintViolationException');
    const written = await rows();
    expect(written.map((r) => r.id)).to.deep.equal([1, 3, 11, 50]);
    const xid = new Map(written.map((r) => [r.id, r.xid]));
    expect(xid.get(1)).to.equal(xid.get(11));
    expect(xid.get(1)).to.not.equal(xid.get(3));
    // The rolled-back transaction's notices never went out; each rewritten work's went once.
    expect(published).to.have.deep.members([
      { kind: 'account', accountId: -1 },
      { kind: 'account', accountId: -3 },
    ]);
  });

  it('commits works that send no last statement, or none at all, with the others', async () => {
    const shared = new SharedTransactions(em, logger);
    await Promise.all([
      shared.run([1], (tx) => insert(tx, 1)),
      shared.run([2], () => Promise.resolve()),
      shared.run([3], (tx) => insert(tx, 3, true)),
    ]);
    const written = await rows();
    expect(written.map((r) => r.id)).to.deep.equal([1, 3]);
    expect(new Set(written.map((r) => r.xid)).size).to.equal(1);
  });

  describe("the node's writers", () => {
    let t: Tenant;
    beforeEach(async () => {
      t = await tenant();
    });
    afterEach(() => t.receiver.close());

    async function clientMessage(widget: Widget, text: string): Promise<ClientMessage> {
      const fork = em();
      const device = await fork.findOneOrFail(DeviceSchema, { accountId: t.account.id, uniqueAppDeviceId: widget.deviceId });
      return {
        account: await fork.findOneOrFail(AccountSchema, { id: t.account.id }),
        user: await fork.findOneOrFail(UserSchema, { id: device.userId }),
        device,
        input: { typeId: 1, text, media: null, requestUrl: null },
      };
    }
    const agentMessage = (userId: number, text: string): AgentMessageInput => ({
      accountId: t.account.id,
      userId,
      agent: { id: 1, name: 'Ann', avatar: null },
      typeId: 2,
      text,
      media: null,
    });
    const transactionOf = async (messageId: number) =>
      (await em().getConnection().execute<Array<{ xid: string }>>('select xmin::text as xid from messages where id = ?', [messageId]))[0]
        ?.xid;

    it('share a transaction on the embedded database only, and never for the same conversation', async () => {
      const [one, two] = [new Widget(t.account), new Widget(t.account)];
      const oneId = (await one.register()).body.data.userId;
      const twoId = (await two.register()).body.data.userId;
      const { messages, agentMessages } = sharedServer().deps;
      const embedded = sharedServer().deps.db.embedded;
      // Handed in within one turn of the event loop: a customer writes while the agent answers another.
      const fromOne = await clientMessage(one, 'from one');
      const [customer, agent] = await Promise.all([messages.send(fromOne), agentMessages.send(agentMessage(twoId, 'to two'))]);
      expect((await transactionOf(customer.message.id)) === (await transactionOf(agent.message.id))).to.equal(embedded);
      // The same conversation: the agent's batch waits for the customer's, and its message follows it.
      const again = await clientMessage(one, 'from one again');
      const [second, answer] = await Promise.all([messages.send(again), agentMessages.send(agentMessage(oneId, 'to one'))]);
      expect(await transactionOf(answer.message.id)).to.not.equal(await transactionOf(second.message.id));
      const [earlier, later] = [second, answer].sort((a, b) => a.message.id - b.message.id);
      expect(later?.prevId).to.equal(earlier?.message.id);
      expect(earlier?.prevId).to.equal(customer.message.id);
    });
  });
});
