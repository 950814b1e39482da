// Deliveries handed to the node's worker by the commit that writes them or makes them the head
// of their chain (src/deliveries/handoff.ts): leased in that commit, sent without a claim, and
// claimed as before when the worker has no room. Counted by palaver_deliveries_taken_total.
import type { EntityManager } from '@mikro-orm/postgresql';
import { expect } from 'chai';
import { createAccount } from '../src/tenancy/accounts.ts';
import { createService } from '../src/tenancy/services.ts';
import { closeWhileHeld, enqueueCommitted, waitForState, webhookId } from './support/deliveries.ts';
import { client } from './support/http.ts';
import { withDatabase } from './support/populate.ts';
import { gate, Receiver } from './support/receiver.ts';
import { startTestServer, type TestServer } from './support/server.ts';

describe('delivery hand-off', function () {
  this.timeout(60_000);
  let receiver: Receiver;
  let server: TestServer;

  beforeEach(async () => {
    receiver = await Receiver.start();
  });
  let closed = false;

  afterEach(async () => {
    if (closed) await server.database.drop();
    else await server?.stop();
    closed = false;
    await receiver.close();
  });

  async function start(webhooks: Record<string, unknown> = {}): Promise<number> {
    server = await startTestServer({ webhooks });
    const em = server.deps.db.orm.em.fork();
    const account = await createAccount(em, { name: 'Hand-off' });
    const created = await createService(em, account.id, { name: 'Receiver', webhookUrl: `${receiver.url}/hook` });
    return created?.service.id ?? 0;
  }

  async function taken(): Promise<{ handoff: number; claim: number }> {
    const text = (await client(server.url).get('/metrics')).text;
    const count = (how: string) => Number(new RegExp(`palaver_deliveries_taken_total\\{how="${how}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
    return { handoff: count('handoff'), claim: count('claim') };
  }

  async function row(id: string, em: EntityManager = server.deps.db.orm.em.fork()) {
    const [found] = await em
      .getConnection()
      .execute<Array<{ claimed_by: string | null; attempts: number; state: string }>>(
        `select claimed_by, attempts, state from deliveries where id = ?`,
        [id],
      );
    return found;
  }

  it('leases a delivery written ready to its node in the commit that writes it, and sends it without a claim', async () => {
    const serviceId = await start();
    // Answered only once the rows were read: however slow the machine, the attempts are still in flight then.
    const held = gate();
    receiver.always({ status: 200, until: held.closed });
    const ids: string[] = [];
    for (const key of [1, 2, 3]) ids.push(...(await enqueueCommitted(server, { recipients: [serviceId], orderingKey: key })));
    // Read right after each commit: already this node's, its attempt counted.
    const node = server.deps.deliveries?.node;
    expect(node).to.be.a('string');
    for (const id of ids) expect(await row(id)).to.include({ claimed_by: node, attempts: 1 });
    held.open();
    for (const id of ids) await waitForState(server, id, 'delivered');
    expect(receiver.requests.map(webhookId).sort()).to.deep.equal([...ids].sort());
    expect(await taken()).to.deep.equal({ handoff: 3, claim: 0 });
  });

  it('hands over the next delivery of a chain with the commit that ends the one before it', async () => {
    const serviceId = await start();
    const held = gate();
    receiver.always({ status: 200, until: held.closed });
    const ids: string[] = [];
    for (let n = 0; n < 4; n++) ids.push(...(await enqueueCommitted(server, { recipients: [serviceId], orderingKey: 7, payload: { n } })));
    // Only the head was leased; the others wait, unleased, for their turn.
    expect(await row(ids[1] ?? '')).to.include({ claimed_by: null, attempts: 0 });
    held.open();
    for (const id of ids) await waitForState(server, id, 'delivered');
    expect(receiver.requests.map((r) => (r.json as { n: number }).n)).to.deep.equal([0, 1, 2, 3]);
    expect(await taken()).to.deep.equal({ handoff: 4, claim: 0 });
  });

  it('leaves what comes while the worker is full to a claim: each sent once, none lost', async () => {
    // Room for two: one in flight, one waiting.
    const serviceId = await start({ maxInFlight: 1, maxPerService: 1 });
    const held = gate();
    receiver.always({ status: 200, until: held.closed });
    const ids: string[] = [];
    for (const key of [1, 2, 3, 4]) ids.push(...(await enqueueCommitted(server, { recipients: [serviceId], orderingKey: key })));
    expect(await row(ids[2] ?? '')).to.include({ claimed_by: null, attempts: 0 });
    held.open();
    for (const id of ids) await waitForState(server, id, 'delivered');
    expect(receiver.requests.map(webhookId).sort()).to.deep.equal([...ids].sort());
    const counts = await taken();
    expect(counts.handoff + counts.claim).to.equal(4);
    expect(counts.handoff).to.equal(2);
  });

  it('sends what waits in the table before newer deliveries once the worker is full again: first written, first sent', async () => {
    // Room for four in all, two per Service: one Service's deliveries fill its share first.
    const serviceId = await start({ maxInFlight: 2, maxPerService: 1 });
    receiver.always({ status: 200, delayMs: 120 });
    const ids: string[] = [];
    // Written faster than they are sent: from the third on, each waits in the table, and slots
    // free up while later ones are being written.
    for (let n = 0; n < 10; n++) {
      ids.push(...(await enqueueCommitted(server, { recipients: [serviceId], orderingKey: n + 1, payload: { n } })));
      await new Promise((r) => setTimeout(r, 40));
    }
    for (const id of ids) await waitForState(server, id, 'delivered');
    expect(receiver.requests.map((r) => (r.json as { n: number }).n)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('gives back a handed-off delivery it did not send when it stops: due again, the attempt not counted', async () => {
    const serviceId = await start({ maxInFlight: 1, maxPerService: 1 });
    // The first attempt is answered only once the node is stopping: the second is still waiting then.
    const held = gate();
    receiver.enqueue({ status: 200, until: held.closed });
    const ids: string[] = [];
    for (const key of [1, 2]) ids.push(...(await enqueueCommitted(server, { recipients: [serviceId], orderingKey: key })));
    expect(await row(ids[1] ?? '')).to.include({ attempts: 1 });
    await receiver.waitFor(1);
    closed = true;
    await closeWhileHeld(server, held);
    // The second waited behind the first: given back unsent.
    const second = await withDatabase(server.database, (em) => row(ids[1] ?? '', em));
    expect(second).to.include({ state: 'pending', claimed_by: null, attempts: 0 });
    expect(receiver.requests).to.have.length(1);
  });
});
