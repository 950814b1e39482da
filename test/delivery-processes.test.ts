// The delivery guarantees across real server processes: a SIGKILL loses nothing, and two
// nodes on one PostgreSQL share the outbox without ever sending one delivery at once.
import { transaction } from '../src/db/tx/run.ts';
import { expect } from 'chai';
import { enqueue } from '../src/deliveries/outbox.ts';
import { createAccount } from '../src/tenancy/accounts.ts';
import { createService } from '../src/tenancy/services.ts';
import { mode, type TestDatabase } from './support/database.ts';
import { webhookId } from './support/deliveries.ts';
import { client } from './support/http.ts';
import { withDatabase } from './support/populate.ts';
import { processFixture } from './support/process.ts';
import { Receiver, type Received } from './support/receiver.ts';

const ADMIN = { PALAVER_ADMIN_EMAIL: 'ops@palaver.test', PALAVER_ADMIN_PASSWORD: 'crash test password' };

interface Work {
  serviceId: number;
  ids: string[];
}

/** An account whose Service posts to the receiver, and `perUser` deliveries for each of `users` users. */
async function populate(database: TestDatabase, receiverUrl: string, users: number, perUser: number): Promise<Work> {
  return withDatabase(database, async (em) => {
    const account = await createAccount(em, { name: 'Outbox' });
    const created = await createService(em, account.id, { name: 'Receiver', webhookUrl: `${receiverUrl}/hook` });
    if (!created) throw new Error('account vanished');
    const serviceId = created.service.id;
    const ids = await transaction(em, async (tx) => {
      const all: string[] = [];
      for (let n = 1; n <= perUser; n++) {
        for (let user = 1; user <= users; user++) {
          all.push(...(await enqueue(tx, { kind: 'event', payload: { user, n }, recipients: [serviceId], orderingKey: user })));
        }
      }
      return all;
    });
    return { serviceId, ids };
  });
}

function distinctIds(requests: Received[]): Set<string> {
  return new Set(requests.map(webhookId));
}

async function waitForAll(receiver: Receiver, ids: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (distinctIds(receiver.requests).size < ids.length) {
    if (Date.now() > deadline) {
      throw new Error(`only ${distinctIds(receiver.requests).size} of ${ids.length} deliveries arrived`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('deliveries across server processes', function () {
  this.timeout(180_000);
  // Registered first, so that its processes are killed before the receiver closes.
  const proc = processFixture('crash', ADMIN);
  let receiver: Receiver;

  beforeEach(async () => {
    receiver = await Receiver.start();
  });

  afterEach(async () => {
    await receiver.close();
  });

  it(`delivers everything after a SIGKILL with deliveries pending and in flight (${mode})`, async () => {
    const work = await populate(proc.database, receiver.url, 3, 20);
    receiver.always({ status: 200, delayMs: 150 });

    const first = await proc.start();
    await receiver.waitFor(10, 60_000);
    const killed = await first.stop('SIGKILL');
    expect(killed.code).to.equal(null);
    const beforeRestart = distinctIds(receiver.requests).size;
    expect(beforeRestart, 'the kill came before the end').to.be.lessThan(work.ids.length);

    const second = await proc.start();
    await waitForAll(receiver, work.ids, 90_000);
    expect([...distinctIds(receiver.requests)].sort()).to.deep.equal([...work.ids].sort());

    // Per user, first arrivals are in order: what was in flight at the kill went again before the next.
    const firstArrival = new Map<string, { user: number; n: number }>();
    for (const r of receiver.requests) {
      if (!firstArrival.has(webhookId(r))) firstArrival.set(webhookId(r), r.json as { user: number; n: number });
    }
    for (let user = 1; user <= 3; user++) {
      const order = [...firstArrival.values()].filter((b) => b.user === user).map((b) => b.n);
      expect(order, `user ${user}`).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 1));
    }

    // And the outbox agrees: nothing is left pending.
    const api = client(second.url);
    const login = await api.post<{ token: string }>('/adminApi/login', {
      json: { email: ADMIN.PALAVER_ADMIN_EMAIL, password: ADMIN.PALAVER_ADMIN_PASSWORD },
    });
    const token = login.body.data.token;
    for (let i = 0; i < 100; i++) {
      const pending = await api.get<unknown[]>(`/adminApi/services/${work.serviceId}/deliveries?state=pending`, { token });
      if (pending.body.data.length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const delivered = await api.get<unknown[]>(`/adminApi/services/${work.serviceId}/deliveries?state=delivered&limit=200`, {
      token,
    });
    expect(delivered.body.data).to.have.length(work.ids.length);
  });

  (mode === 'postgresql' ? it : it.skip)('shares 5,000 deliveries between two nodes, never sending one from both at once', async () => {
    // 500 chains: more than both nodes' first claims take for one Service (twice
    // webhooks.maxPerService each), and a node keeps the chains it holds (the next of a chain is
    // handed to the node that ended the one before), so with fewer one node may hold them all.
    const work = await populate(proc.database, receiver.url, 500, 10);
    receiver.always({ status: 200, delayMs: 2 });
    const nodes = await Promise.all([proc.start(), proc.start()]);
    await waitForAll(receiver, work.ids, 150_000);

    const byId = new Map<string, Received[]>();
    for (const r of receiver.requests) byId.set(webhookId(r), [...(byId.get(webhookId(r)) ?? []), r]);
    expect(byId.size).to.equal(5000);
    for (const [id, attempts] of byId) {
      const sorted = [...attempts].sort((a, b) => a.at - b.at);
      for (let i = 1; i < sorted.length; i++) {
        const previousEnd = sorted[i - 1]?.answeredAt ?? sorted[i - 1]?.closedAt ?? Infinity;
        expect(sorted[i]!.at, `delivery ${id} was sent again while in flight`).to.be.at.least(previousEnd);
      }
    }

    // Both nodes did part of the work. A node counts a delivery once its outcome is committed,
    // which is a moment after the receiver answered: wait for the last outcomes to be written.
    const deliveredByNode = () =>
      Promise.all(
        nodes.map(async (node) => {
          const metrics = await client(node.url).get('/metrics');
          return Number(/palaver_delivery_attempts_total\{outcome="delivered"\} (\d+)/.exec(metrics.text)?.[1] ?? 0);
        }),
      );
    let delivered = await deliveredByNode();
    for (let i = 0; i < 100 && delivered[0]! + delivered[1]! < 5000; i++) {
      await new Promise((r) => setTimeout(r, 100));
      delivered = await deliveredByNode();
    }
    expect(delivered[0]).to.be.greaterThan(0);
    expect(delivered[1]).to.be.greaterThan(0);
    expect(delivered[0]! + delivered[1]!).to.be.at.least(5000);
  });
});
