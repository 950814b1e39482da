// A login merge racing messages of the same conversation (issue 12): every message a writer
// acknowledges ends up in the registered conversation, and none stays on the merged-away
// anonymous user. The interleavings are forced with transactions the test holds open, and
// observed through pg_blocking_pids, not timed with sleeps.
import type { Transaction } from '../src/db/tx/transaction.ts';
import { transaction } from '../src/db/tx/run.ts';
import { expect } from 'chai';
import { recordUserMessage } from '../src/conversations/messages.ts';
import { lockUsers } from '../src/conversations/users.ts';
import { AccountSchema, DeviceSchema, MessageSchema, UserSchema } from '../src/db/entities/index.ts';
import { mode } from './support/database.ts';
import { sharedServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

const em = () => sharedServer().deps.db.orm.em.fork();

interface Held<T> {
  value: T;
  /** The backend holding the transaction: what the blocked calls wait for. */
  pid: number;
  commit(): Promise<void>;
}

/** Runs `work` in a transaction of its own that stays open (and keeps its locks) until commit(). */
async function holdTransaction<T>(work: (tx: Transaction) => Promise<T>): Promise<Held<T>> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: (held: { value: T; pid: number }) => void;
  const ready = new Promise<{ value: T; pid: number }>((resolve) => (started = resolve));
  const done = transaction(em(), async (tx) => {
    const [row] = await tx.em
      .getConnection()
      .execute<Array<{ pid: number }>>('select pg_backend_pid() as pid', [], 'all', tx.em.getTransactionContext());
    started({ value: await work(tx), pid: Number(row?.pid) });
    await released;
  });
  const { value, pid } = await Promise.race([ready, done.then(() => Promise.reject(new Error('transaction ended early')))]);
  return {
    value,
    pid,
    commit: async () => {
      release();
      await done;
    },
  };
}

/**
 * Backends of this database waiting for a row lock, and whom they wait for. Only row locks:
 * the delivery worker may wait for a chain's advisory lock held by the same transactions.
 */
async function rowLockWaits(): Promise<Array<{ pid: number; blockers: number[] }>> {
  const rows = await em()
    .getConnection()
    .execute<Array<{ pid: number; blockers: number[] }>>(
      `select a.pid, pg_blocking_pids(a.pid) as blockers from pg_stat_activity a
       where a.datname = current_database()
         and exists (select 1 from pg_locks l where l.pid = a.pid and not l.granted and l.locktype in ('transactionid', 'tuple'))`,
    );
  return rows.map((r) => ({ pid: Number(r.pid), blockers: r.blockers.map(Number) }));
}

/** Polls the server's lock table until `ready` holds (each poll is a query, not a guess at timing). */
async function waitForRowLocks(what: string, ready: (waits: Array<{ pid: number; blockers: number[] }>) => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (ready(await rowLockWaits())) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

interface Tracked<T> {
  promise: Promise<T>;
  settled(): boolean;
}

/** A promise with a flag saying whether it has settled yet. */
function tracked<T>(promise: Promise<T>): Tracked<T> {
  let settled = false;
  const marked = promise.finally(() => (settled = true));
  return { promise: marked, settled: () => settled };
}

async function messageRows(userId: number): Promise<number> {
  return em().count(MessageSchema, { userId });
}

describe('login merge racing messages (issue 12)', function () {
  this.timeout(30_000);
  let t: Tenant;

  beforeEach(async () => {
    t = await tenant();
  });
  afterEach(() => t.receiver.close());

  describe('forced interleavings', function () {
    before(function () {
      if (mode !== 'postgresql') {
        // One connection: a transaction held open here would stop the merge from ever starting,
        // so the interleaving cannot happen (nor be tested) on the embedded database.
        process.stdout.write('    (skipped on the embedded database: it runs one transaction at a time; set TEST_DATABASE_URL)\n');
        this.skip();
      }
    });

    it('a message written under the anonymous user’s lock while the login merge runs moves with the conversation', async () => {
      const widget = new Widget(t.account);
      const anonymousId = (await widget.register()).body.data.userId;
      const before = await widget.send('before login');
      expect(before.status).to.equal(200);
      const device = await em().findOneOrFail(DeviceSchema, { uniqueAppDeviceId: widget.deviceId });

      // A client message writer, stopped between its write and its commit.
      const writer = await holdTransaction(async (tx) => {
        const account = await tx.em.findOneOrFail(AccountSchema, { id: t.account.id });
        const written = await recordUserMessage(
          tx,
          account,
          { id: anonymousId },
          {
            typeId: 1,
            text: 'written under the lock',
            media: null,
            deviceId: device.id,
            requestUrl: null,
          },
        );
        return written.message.id;
      });
      const login = new Widget(t.account, widget.deviceId).signIn('customer-held-writer');
      const merge = tracked(login.register());
      try {
        await waitForRowLocks('the merge to wait for the writer', (waits) => waits.some((w) => w.blockers.includes(writer.pid)));
        expect(merge.settled(), 'the merge waits for the writer').to.equal(false);
      } finally {
        await writer.commit();
      }
      const merged = await merge.promise;
      expect(merged.status).to.equal(200);
      const registeredId = merged.body.data.userId;
      expect(registeredId).to.not.equal(anonymousId);

      const history = await login.messages();
      expect(history.body.data.map((m) => [m.id, m.message])).to.deep.equal([
        [writer.value, 'written under the lock'],
        [Number(before.body.data.messageId), 'before login'],
      ]);
      expect(await messageRows(anonymousId), 'rows left on the merged-away user').to.equal(0);
      // The two messages and the registered user's user_registered.
      expect(await messageRows(registeredId)).to.equal(3);
      expect((await em().findOneOrFail(UserSchema, { id: anonymousId })).mergedIntoUserId).to.equal(registeredId);
    });

    // The merge stopped while it holds what it locks first: the registered user's lock is held
    // by the test (as a writer to the customer's other device would), and a message is sent
    // meanwhile. Run with the registered user older (its id, and lock, comes first: the merge
    // holds nothing yet and the message is written to the anonymous user) and younger (the
    // merge holds the anonymous user: the message waits for the merge, then follows it).
    for (const customerFirst of [true, false]) {
      it(`a message sent while the merge waits for the registered user’s lock lands on the registered user (customer ${customerFirst ? 'older' : 'younger'} than the anonymous user)`, async () => {
        const identification = `customer-held-merge-${customerFirst ? 'older' : 'younger'}`;
        const phone = new Widget(t.account).signIn(identification);
        const laptop = new Widget(t.account);
        let registeredId: number;
        let anonymousId: number;
        if (customerFirst) {
          registeredId = (await phone.register()).body.data.userId;
          anonymousId = (await laptop.register()).body.data.userId;
        } else {
          anonymousId = (await laptop.register()).body.data.userId;
          registeredId = (await phone.register()).body.data.userId;
        }
        expect(registeredId < anonymousId).to.equal(customerFirst);
        // History to move: the merge then has work to do before it marks the tombstone.
        const before = await laptop.send('before login');
        expect(before.status).to.equal(200);

        const holder = await holdTransaction((tx) => lockUsers(tx, [registeredId]));
        const login = new Widget(t.account, laptop.deviceId).signIn(identification);
        const merge = tracked(login.register());
        let send: Tracked<Awaited<ReturnType<Widget['send']>>> | undefined;
        try {
          await waitForRowLocks('the merge to wait for the registered user', (waits) => waits.some((w) => w.blockers.includes(holder.pid)));
          const sending = tracked(laptop.send('sent during the merge'));
          send = sending;
          // Either the message is written (the merge holds nothing it needs) or it waits for the merge.
          await waitForRowLocks(
            'the message to be written or to wait for the merge',
            (waits) => sending.settled() || waits.some((w) => !w.blockers.includes(holder.pid)),
          );
          expect(merge.settled(), 'the merge is still waiting').to.equal(false);
        } finally {
          await holder.commit();
        }
        const merged = await merge.promise;
        expect(merged.status).to.equal(200);
        expect(merged.body.data.userId).to.equal(registeredId);
        const sent = await send.promise;
        expect(sent.status, 'the message was acknowledged').to.equal(200);

        const history = await phone.messages();
        expect(history.body.data.map((m) => [m.id, m.message])).to.deep.equal([
          [Number(sent.body.data.messageId), 'sent during the merge'],
          [Number(before.body.data.messageId), 'before login'],
        ]);
        expect(await messageRows(anonymousId), 'rows left on the merged-away user').to.equal(0);
        expect(await messageRows(registeredId)).to.equal(3);
      });
    }
  });

  it('devices sending while they log in lose no acknowledged message', async () => {
    const devices = 20;
    const perDevice = 6;
    const widgets = Array.from({ length: devices }, () => new Widget(t.account));
    const anonymousIds = await Promise.all(widgets.map(async (w) => (await w.register()).body.data.userId));
    const firsts = await Promise.all(widgets.map((w) => w.send('first')));
    expect(firsts.map((a) => a.status)).to.deep.equal(Array(devices).fill(200));

    // Each device's login goes out in the middle of its messages, all devices at once.
    const logins = widgets.map((w, i) => new Widget(t.account, w.deviceId).signIn(`stress-${i}`));
    const rounds = await Promise.all(
      widgets.map(async (w, i) => {
        const sends = Array.from({ length: perDevice }, (_, n) => n);
        const before = sends.slice(0, perDevice / 2).map((n) => w.send(`message ${n}`));
        const login = logins[i]!.register();
        const after = sends.slice(perDevice / 2).map((n) => w.send(`message ${n}`));
        return { login: await login, sends: await Promise.all([...before, ...after]) };
      }),
    );

    const acknowledged: number[] = [];
    const lost: number[] = [];
    const unacknowledged: number[] = [];
    for (const [i, { login, sends }] of rounds.entries()) {
      expect(login.status).to.equal(200);
      // A message sent once the device belongs to the customer needs the customer's authorization.
      for (const answer of sends) {
        if (answer.status !== 200) expect(answer.body.notifications[0]?.message).to.equal('authorization_required');
      }
      const acked = [firsts[i]!, ...sends].filter((a) => a.status === 200).map((a) => Number(a.body.data.messageId));
      acknowledged.push(...acked);
      const shown = new Set((await logins[i]!.messages()).body.data.map((m) => m.id));
      lost.push(...acked.filter((id) => !shown.has(id)));
      unacknowledged.push(...[...shown].filter((id) => !acked.includes(id)));
      const tombstone = await em().findOneOrFail(UserSchema, { id: anonymousIds[i]! });
      expect(tombstone.mergedIntoUserId).to.equal(login.body.data.userId);
    }
    const leftOnAnonymous = await em().count(MessageSchema, { userId: { $in: anonymousIds } });
    // All at once, so a failure says how many of how many were lost.
    const outcome = { acknowledged: acknowledged.length, lost: lost.length, unacknowledged: unacknowledged.length, leftOnAnonymous };
    expect(outcome).to.deep.equal({ acknowledged: acknowledged.length, lost: 0, unacknowledged: 0, leftOnAnonymous: 0 });
    expect(acknowledged.length, 'messages were written besides the first ones').to.be.greaterThan(devices);
  });
});
