// Every attempt of a delivery is logged with its outcome (GET /adminApi/deliveries/{id}/attempts),
// the last hour's numbers count attempts, and the operators' live channel says when a Service's
// delivery outcomes were committed (to operators of that account only).
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { io, type Socket } from 'socket.io-client';
import { enqueueCommitted, waitForState } from './support/deliveries.ts';
import { adminToken, createAccount, createService } from './support/factories.ts';
import { client } from './support/http.ts';
import { Receiver } from './support/receiver.ts';
import { sharedServer } from './support/server.ts';

interface Attempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  status: number | null;
  error: string | null;
  outcome: string;
  nextAttemptAt: string | null;
}

interface DeliveriesChange {
  accountId: number;
  serviceIds: number[];
}

/** An operator socket on /operators, recording its `deliveries` events. */
class OperatorSocket {
  readonly changes: DeliveriesChange[] = [];
  readonly socket: Socket;

  constructor(token: string) {
    this.socket = io(`${sharedServer().url}/operators`, {
      path: '/socket.io',
      transports: ['websocket'],
      reconnection: false,
      auth: { token },
    });
    this.socket.on('deliveries', (change: DeliveriesChange) => this.changes.push(change));
  }

  connected(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve());
      this.socket.once('connect_error', reject);
    });
  }

  async waitFor(serviceId: number, timeoutMs = 10_000): Promise<DeliveriesChange> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.changes.find((c) => c.serviceIds.includes(serviceId));
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no deliveries event for Service ${serviceId}: ${JSON.stringify(this.changes)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

describe('Admin API: delivery attempts', function () {
  this.timeout(60_000);
  const api = () => client(sharedServer().url);
  let receiver: Receiver;
  const sockets: OperatorSocket[] = [];

  beforeEach(async () => {
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.socket.disconnect();
    await receiver.close();
  });

  async function operatorSocket(token: string): Promise<OperatorSocket> {
    const socket = new OperatorSocket(token);
    sockets.push(socket);
    await socket.connected();
    return socket;
  }

  it('lists every attempt with its status, duration, error, outcome and next attempt', async () => {
    const account = await createAccount();
    const service = await createService(account.id, { webhookUrl: receiver.url });
    receiver.enqueue({ status: 500, body: 'broken' }, { status: 503, headers: { 'retry-after': '0' } });
    const [id] = await enqueueCommitted(sharedServer(), { recipients: [service.id] });
    await waitForState(sharedServer(), id!, 'delivered');

    const answer = await api().get<Attempt[]>(`/adminApi/deliveries/${id}/attempts`, { token: await adminToken() });
    expect(answer.status, answer.text).to.equal(200);
    const attempts = answer.body.data;
    expect(attempts.map((a) => [a.attempt, a.status, a.outcome])).to.deep.equal([
      [1, 500, 'retry'],
      [2, 503, 'retry'],
      [3, 200, 'delivered'],
    ]);
    expect(receiver.requests).to.have.length(3);
    for (const [n, a] of attempts.entries()) {
      expect(Number.isInteger(a.durationMs) && a.durationMs >= 0, `duration ${a.durationMs}`).to.equal(true);
      // Each attempt was made when the previous one said the next was due, or later.
      const previous = attempts[n - 1];
      if (previous) expect(Date.parse(a.startedAt)).to.be.at.least(Date.parse(previous.nextAttemptAt ?? '') - 5);
      expect(a.nextAttemptAt === null).to.equal(a.outcome === 'delivered');
    }
    expect(attempts[0]?.error).to.be.a('string').and.not.equal('');
    expect(attempts[2]?.error).to.equal(null);
  });

  it('counts attempts in the last hour, a dead delivery once per attempt', async () => {
    const account = await createAccount();
    const service = await createService(account.id, { webhookUrl: receiver.url });
    const retries = sharedServer().config.webhooks.retrySchedule.length;
    receiver.respondWith((request) => ((request.json as { fail?: boolean }).fail ? { status: 500 } : undefined));
    const [dead] = await enqueueCommitted(sharedServer(), { recipients: [service.id], orderingKey: 1, payload: { fail: true } });
    const [delivered] = await enqueueCommitted(sharedServer(), { recipients: [service.id], orderingKey: 2 });
    await waitForState(sharedServer(), dead!, 'dead');
    await waitForState(sharedServer(), delivered!, 'delivered');

    const token = await adminToken();
    const stats = await api().get<{ dead: number; delivered: number; lastHour: Array<{ delivered: number; failed: number }> }>(
      `/adminApi/services/${service.id}/delivery-stats`,
      { token },
    );
    expect(stats.status, stats.text).to.equal(200);
    const sum = (key: 'delivered' | 'failed') => stats.body.data.lastHour.reduce((total, m) => total + m[key], 0);
    expect({ dead: stats.body.data.dead, delivered: stats.body.data.delivered }).to.deep.equal({ dead: 1, delivered: 1 });
    expect({ delivered: sum('delivered'), failed: sum('failed') }).to.deep.equal({ delivered: 1, failed: retries });
    const log = await api().get<Attempt[]>(`/adminApi/deliveries/${dead}/attempts`, { token });
    expect(log.body.data.map((a) => a.outcome)).to.deep.equal([...Array<string>(retries - 1).fill('retry'), 'dead']);
  });

  it('tells operators of the account, and only them, that outcomes were committed', async () => {
    const [mine, theirs] = [await createAccount(), await createAccount()];
    const [myService, theirService] = [
      await createService(mine.id, { webhookUrl: receiver.url }),
      await createService(theirs.id, { webhookUrl: receiver.url }),
    ];
    const email = `attempts-${randomBytes(6).toString('hex')}@palaver.test`;
    const password = 'operator password';
    const created = await api().post('/adminApi/operators', {
      token: await adminToken(),
      json: { email, password, grants: [{ accountId: theirs.id, permission: '*' }] },
    });
    expect(created.status, created.text).to.equal(201);
    const login = await api().post<{ token: string }>('/adminApi/login', { json: { email, password } });
    expect(login.status, login.text).to.equal(200);
    const admin = await operatorSocket(await adminToken());
    const theirOperator = await operatorSocket(login.body.data.token);

    const [id] = await enqueueCommitted(sharedServer(), { recipients: [myService.id] });
    await waitForState(sharedServer(), id!, 'delivered');
    expect(await admin.waitFor(myService.id)).to.deep.include({ accountId: mine.id });

    // Their operator hears of their Service; had it been told of mine, that came first.
    const [theirId] = await enqueueCommitted(sharedServer(), { recipients: [theirService.id] });
    await waitForState(sharedServer(), theirId!, 'delivered');
    expect(await theirOperator.waitFor(theirService.id)).to.deep.include({ accountId: theirs.id });
    expect(theirOperator.changes.filter((c) => c.accountId !== theirs.id)).to.deep.equal([]);
  });

  it('answers 404 for an unknown delivery and 422 for an id that is not one', async () => {
    const token = await adminToken();
    const unknown = await api().get(`/adminApi/deliveries/00000000-0000-4000-8000-000000000000/attempts`, { token });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.notifications).to.deep.equal([{ type: 'error', message: 'delivery_not_found' }]);
    const bad = await api().get(`/adminApi/deliveries/not-a-uuid/attempts`, { token });
    expect(bad.status).to.equal(422);
  });
});
