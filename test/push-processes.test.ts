// Pushes across a real server process killed mid-delivery: every push written before the
// kill arrives, per device in order, and none is sent twice at the same time (the lease).
import { expect } from 'chai';
import { mode } from './support/database.ts';
import { webhookId } from './support/deliveries.ts';
import { client } from './support/http.ts';
import { processFixture } from './support/process.ts';
import { Receiver, type Received } from './support/receiver.ts';
import { parleyData } from './support/push.ts';

const ADMIN = { PALAVER_ADMIN_EMAIL: 'ops@palaver.test', PALAVER_ADMIN_PASSWORD: 'crash test password' };
const USERS = 3;
const PER_USER = 15;

describe('pushes across server processes', function () {
  this.timeout(180_000);
  // Registered first, so that its processes are killed before the receiver closes.
  const proc = processFixture('pushcrash', ADMIN);
  let hook: Receiver;

  beforeEach(async () => {
    hook = await Receiver.start();
  });
  afterEach(async () => {
    await hook.close();
  });

  it(`sends every push written before a SIGKILL, per device in order, never twice at once (${mode})`, async () => {
    // Slow enough that the kill finds pushes pending and in flight.
    hook.always({ status: 200, delayMs: 150 });
    const first = await proc.start();
    const api = client(first.url);
    const login = await api.post<{ token: string }>('/adminApi/login', {
      json: { email: ADMIN.PALAVER_ADMIN_EMAIL, password: ADMIN.PALAVER_ADMIN_PASSWORD },
    });
    const token = login.body.data.token;
    const account = await api.post<{ id: number; identification: string }>('/adminApi/accounts', { token, json: { name: 'Crash' } });
    const service = await api.post<{ apiKey: string }>(`/adminApi/accounts/${account.body.data.id}/services`, {
      token,
      json: { name: 'Desk' },
    });
    const settings = await api.put(`/adminApi/accounts/${account.body.data.id}/push-settings/webhook`, {
      token,
      json: { url: `${hook.url}/push` },
    });
    expect(settings.status, settings.text).to.equal(200);

    const users: number[] = [];
    for (let u = 1; u <= USERS; u++) {
      const registered = await api.post<{ userId: number }>('/devices', {
        headers: { 'x-iris-identification': `${account.body.data.identification}:crash-device-${u}` },
        json: { type: 1, pushToken: `token-${u}`, pushType: 4, pushEnabled: true },
      });
      expect(registered.status, registered.text).to.equal(200);
      users.push(registered.body.data.userId);
    }
    for (let n = 1; n <= PER_USER; n++) {
      for (const [u, userId] of users.entries()) {
        const sent = await api.post(`/users/${userId}/messages`, {
          token: service.body.data.apiKey,
          json: { message: `u${u + 1}-${n}`, agent: { id: 1, name: 'Ada' } },
        });
        expect(sent.status, sent.text).to.equal(201);
      }
    }
    const total = USERS * PER_USER;

    await hook.waitFor(5, 60_000);
    const killed = await first.stop('SIGKILL');
    expect(killed.code).to.equal(null);
    expect(new Set(hook.requests.map(webhookId)).size, 'the kill came before the end').to.be.lessThan(total);

    const second = await proc.start();
    const deadline = Date.now() + 90_000;
    while (new Set(hook.requests.map(webhookId)).size < total) {
      if (Date.now() > deadline) throw new Error(`only ${new Set(hook.requests.map(webhookId)).size} of ${total} pushes arrived`);
      await new Promise((r) => setTimeout(r, 100));
    }

    const text = (r: Received) => parleyData((r.json as { data: unknown }).data).message ?? '';
    // First arrivals per device are in order: what was in flight at the kill went again before the next.
    const firstArrival = new Map<string, string>();
    for (const r of hook.requests) if (!firstArrival.has(webhookId(r))) firstArrival.set(webhookId(r), text(r));
    for (let u = 1; u <= USERS; u++) {
      const order = [...firstArrival.values()].filter((m) => m.startsWith(`u${u}-`));
      expect(order, `device ${u}`).to.deep.equal(Array.from({ length: PER_USER }, (_, i) => `u${u}-${i + 1}`));
    }
    // A push sent again (its answer lost with the killed node) never overlapped its earlier attempt,
    // which ended when it was answered or, cut by the kill, when its connection closed.
    const byId = new Map<string, Received[]>();
    for (const r of hook.requests) byId.set(webhookId(r), [...(byId.get(webhookId(r)) ?? []), r]);
    for (const [id, attempts] of byId) {
      for (let i = 1; i < attempts.length; i++) {
        expect(attempts[i]!.at, `push ${id} was sent again while in flight`).to.be.at.least(
          attempts[i - 1]?.answeredAt ?? attempts[i - 1]?.closedAt ?? Infinity,
        );
      }
    }

    // And the outbox agrees: every push delivered, nothing pending.
    const secondApi = client(second.url);
    const token2 = (
      await secondApi.post<{ token: string }>('/adminApi/login', {
        json: { email: ADMIN.PALAVER_ADMIN_EMAIL, password: ADMIN.PALAVER_ADMIN_PASSWORD },
      })
    ).body.data.token;
    let delivered: unknown[] = [];
    for (let i = 0; i < 100; i++) {
      delivered = (
        await secondApi.get<unknown[]>(`/adminApi/accounts/${account.body.data.id}/push-deliveries?state=delivered&limit=200`, {
          token: token2,
        })
      ).body.data;
      if (delivered.length === total) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(delivered).to.have.length(total);
  });
});
