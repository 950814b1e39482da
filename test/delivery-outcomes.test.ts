// The delivery worker group-commits attempt outcomes. One outcome that cannot be written must
// fail alone: the others of its batch are written (and counted) at once, not left to their
// leases running out and sent a second time.
import { transaction } from '../src/db/tx/run.ts';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import pg from 'pg';
import { heldTransaction } from '../src/db/tx/held.ts';
import { outletsOf } from '../src/db/tx/outlets.ts';
import { enqueue } from '../src/deliveries/outbox.ts';
import { writeOutcomes } from '../src/deliveries/outcomes.ts';
import { findDelivery } from '../src/deliveries/listings.ts';
import { createAccount } from '../src/tenancy/accounts.ts';
import { createService } from '../src/tenancy/services.ts';
import { mode } from './support/database.ts';
import { sleep, waitForState } from './support/deliveries.ts';
import { startTestServer, type TestServer } from './support/server.ts';

/** A webhook endpoint that holds its answers until told, so the outcomes of many attempts come in together. */
class Gate {
  readonly received: string[] = [];
  url = '';
  private readonly server: Server;
  private held: Array<{ id: string; res: ServerResponse }> = [];
  private holding = true;

  constructor(private readonly status: (id: string, attempt: number) => number) {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        this.received.push(id);
        if (this.holding) this.held.push({ id, res });
        else this.answer(id, res);
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  attempts(id: string): number {
    return this.received.filter((r) => r === id).length;
  }

  async waitForHeld(count: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.held.length < count) {
      if (Date.now() > deadline) throw new Error(`${this.held.length} of ${count} requests arrived`);
      await sleep(5);
    }
  }

  /** Answers every held request in this order, in one go; later requests are answered at once. */
  release(order: string[]): void {
    this.holding = false;
    const byId = new Map(this.held.map((h) => [h.id, h.res]));
    this.held = [];
    for (const id of order) this.answer(id, byId.get(id)!);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(id: string, res: ServerResponse): void {
    res.writeHead(this.status(id, this.attempts(id)), { 'content-type': 'application/json' });
    res.end('{}');
  }
}

describe('delivery outcomes', function () {
  this.timeout(60_000);
  let server: TestServer;

  // Its own server: the test adds a constraint to the deliveries table.
  before(async () => {
    // A long timeout, so the lease (twice the timeout and 5 s) is far longer than the test
    // waits: an outcome not written shows as a delivery still pending, not as a resend.
    server = await startTestServer({ webhooks: { timeoutMs: 10_000 }, logLevel: 'fatal' });
  });
  after(() => server.stop());

  it('writes every outcome of a batch but the one that cannot be written, and counts only those', async () => {
    const em = server.deps.db.orm.em.fork();
    // Stands in for any outcome the write refuses: the worker's statement does not know this
    // constraint, so only the database can tell which record breaks it.
    await em.getConnection().execute(
      `alter table deliveries add constraint deliveries_delivered_after_created
         check (delivered_at is null or delivered_at >= created_at) not valid`,
    );
    const roles = { dead: '', retried: '' };
    const gate = await new Gate((id, attempt) => (id === roles.dead ? 400 : id === roles.retried && attempt === 1 ? 503 : 200)).start();
    try {
      const account = await createAccount(em, { name: 'Outcomes' });
      const created = await createService(em, account.id, { name: 'Gated', webhookUrl: gate.url });
      const serviceId = created!.service.id;

      // Heads of chains 1..9: six answered 200, one 400 (dead), one 503 then 200 (retried), one
      // whose row becomes unwritable. Chains 1 and 9 have a second delivery behind their head.
      const ids = await transaction(em.fork(), async (tx) => {
        const one = async (key: number, n: number) =>
          (await enqueue(tx, { kind: 'event', payload: { key, n }, recipients: [serviceId], orderingKey: key }))[0]!;
        const heads: string[] = [];
        for (let key = 1; key <= 9; key++) heads.push(await one(key, 1));
        return { heads, afterGood: await one(1, 2), afterBad: await one(9, 2) };
      });
      const [g1, g2, g3, g4, g5, g6, dead, retried, bad] = ids.heads as [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      const good = [g1, g2, g3, g4, g5, g6];
      Object.assign(roles, { dead, retried });

      await gate.waitForHeld(9);
      // Between the claim and the outcome, the row becomes one its outcome cannot be written to.
      await em.getConnection().execute(`update deliveries set created_at = now() + interval '1 day' where id = ?`, [bad]);
      // All answers at once, the unwritable one in the middle: their outcomes share a batch.
      gate.release([g1, g2, g3, bad, g4, g5, g6, dead, retried]);

      // Well within the lease: written at once, not after the lease ran out.
      for (const id of [...good, ids.afterGood, retried]) await waitForState(server, id, 'delivered', 5000);
      await waitForState(server, dead, 'dead', 5000);
      for (const id of [...good, ids.afterGood, dead]) expect(gate.attempts(id), `attempts of ${id}`).to.equal(1);
      expect(gate.attempts(retried)).to.equal(2);

      // The unwritable outcome failed alone: still pending, and its chain waits behind it.
      expect((await findDelivery(em.fork(), bad))?.state).to.equal('pending');
      expect(gate.attempts(bad)).to.equal(1);
      expect(gate.attempts(ids.afterBad), 'the next of its chain').to.equal(0);

      // Counted once committed: the unwritable one is not.
      const counted = async () => {
        const figures: Record<string, number> = {};
        for (const v of (await server.deps.metrics.deliveries.get()).values) figures[String(v.labels.outcome)] = v.value;
        return figures;
      };
      const expected = { delivered: 8, dead: 1, failed: 1 };
      const settled = async () => {
        const now = await counted();
        return Object.entries(expected).every(([outcome, n]) => now[outcome] === n);
      };
      for (let i = 0; i < 100 && !(await settled()); i++) await sleep(20);
      expect(await counted()).to.deep.equal(expected);
    } finally {
      await gate.close();
    }
  });

  it('ends deliveries in one round trip: the chain locks and the statement that ends them leave together', async () => {
    const em = server.deps.db.orm.em.fork();
    // Holds the worker's own attempt, so the outcome below is the only one written meanwhile.
    const gate = await new Gate(() => 200).start();
    try {
      const account = await createAccount(em, { name: 'One round trip' });
      const created = await createService(em, account.id, { name: 'Held', webhookUrl: gate.url });
      const serviceId = created!.service.id;
      const [head, next] = await transaction(em.fork(), async (tx) => [
        (await enqueue(tx, { kind: 'event', payload: { n: 1 }, recipients: [serviceId], orderingKey: 7 }))[0]!,
        (await enqueue(tx, { kind: 'event', payload: { n: 2 }, recipients: [serviceId], orderingKey: 7 }))[0]!,
      ]);
      await gate.waitForHeld(1);

      // The client goes idle ('drain') once everything it sent is answered: once per round trip.
      let roundTrips = 0;
      const counted = () => roundTrips++;
      const { committed } = await heldTransaction(em, async (tx) => {
        // The pooled connection outlives the transaction (the embedded database's only one): counted during it alone.
        const connection = tx.connection as unknown as pg.Client;
        connection.on('drain', counted);
        try {
          // Delivered is recorded whichever node holds the lease: the receiver has it.
          return await writeOutcomes(tx, 'another-node', [
            { type: 'delivered', id: head, status: 200, error: null, startedAt: new Date(), durationMs: 1 },
          ]);
        } finally {
          connection.off('drain', counted);
        }
      });
      expect(roundTrips).to.equal(1);
      expect((await findDelivery(em.fork(), head))?.state).to.equal('delivered');
      // The chain's next delivery was promoted (and leased) by the same statement: handed to the
      // worker once committed, as the worker's group commit does, it is sent.
      outletsOf(em).deliver(committed);
      await gate.waitForHeld(2);
      expect(gate.received).to.include(next);
    } finally {
      await gate.close();
    }
  });

  // A user's erasure deletes their deliveries, whatever the worker is doing with them. Only
  // PostgreSQL has a second connection to delete with while the worker's statement runs.
  it('drops the outcome of a delivery deleted while it is written, without an error', async function () {
    if (mode !== 'postgresql') this.skip();
    const em = server.deps.db.orm.em.fork();
    const gate = await new Gate(() => 200).start();
    const deleter = new pg.Client({ connectionString: server.database.databaseUrl });
    await deleter.connect();
    const logger = server.deps.logger;
    const { error } = logger;
    const errors: unknown[] = [];
    logger.error = (...args: unknown[]) => void errors.push(args);
    try {
      const account = await createAccount(em, { name: 'Erased meanwhile' });
      const created = await createService(em, account.id, { name: 'Gated', webhookUrl: gate.url });
      const serviceId = created!.service.id;
      const delivered = async () =>
        (await server.deps.metrics.deliveries.get()).values.find((v) => v.labels.outcome === 'delivered')?.value ?? 0;
      const before = await delivered();
      const [id] = await transaction(em.fork(), (tx) =>
        enqueue(tx, { kind: 'event', payload: { n: 1 }, recipients: [serviceId], orderingKey: 77 }),
      );
      await gate.waitForHeld(1);

      // The deletion holds the row until it commits; the worker's statement meets it.
      await deleter.query('begin');
      expect((await deleter.query('delete from deliveries where id = $1', [id])).rowCount).to.equal(1);
      gate.release([id!]);
      const waiting = async () =>
        Number(
          (
            await deleter.query<{ n: string }>(
              `select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
            )
          ).rows[0]?.n,
        );
      for (let i = 0; i < 500 && (await waiting()) === 0; i++) await sleep(20);
      expect(await waiting(), "the worker's statement waits for the deletion").to.equal(1);
      await deleter.query('commit');

      // Written (and counted) once the deletion committed: nothing of it left, nothing failed.
      for (let i = 0; i < 500 && (await delivered()) === before && errors.length === 0; i++) await sleep(20);
      expect(errors, 'error lines logged').to.deep.equal([]);
      expect(await delivered()).to.equal(before + 1);
      const left = await deleter.query('select 1 from delivery_attempts where delivery_id = $1', [id]);
      expect(left.rowCount, 'attempts logged for the deleted delivery').to.equal(0);
    } finally {
      logger.error = error;
      await deleter.end();
      await gate.close();
    }
  });
});
