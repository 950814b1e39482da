// The delivery engine against a real receiver on loopback: outbox atomicity, signatures,
// retries, ordering, 410, Retry-After, timeouts, dead deliveries and their redelivery.
import { transaction } from '../src/db/tx/run.ts';
import { expect } from 'chai';
import { AccountSchema } from '../src/db/entities/index.ts';
import { enqueue } from '../src/deliveries/outbox.ts';
import { findDelivery } from '../src/deliveries/listings.ts';
import { createAccount as createAccountIn } from '../src/tenancy/accounts.ts';
import { createService as createServiceIn } from '../src/tenancy/services.ts';
import { claimedBy, closeWhileHeld, enqueueCommitted, sleep, verify, waitForState, webhookId } from './support/deliveries.ts';
import { adminToken, createAccount, createService } from './support/factories.ts';
import { client } from './support/http.ts';
import { gate, Receiver } from './support/receiver.ts';
import { withDatabase } from './support/populate.ts';
import { sharedServer, startTestServer } from './support/server.ts';

describe('delivery engine', function () {
  this.timeout(60_000);
  let receiver: Receiver;

  beforeEach(async () => {
    receiver = await Receiver.start();
  });
  afterEach(() => receiver.close());

  async function serviceFor(url = receiver.url + '/hook') {
    const account = await createAccount();
    const service = await createService(account.id, { webhookUrl: url });
    return { account, service };
  }

  describe('outbox', () => {
    it('writes a delivery only when the change that causes it commits', async () => {
      const { account, service } = await serviceFor();
      const em = sharedServer().deps.db.orm.em.fork();

      const failure = await transaction(em, async (tx) => {
        const row = await tx.em.findOneOrFail(AccountSchema, { id: account.id });
        row.name = 'Renamed, then rolled back';
        await tx.em.flush();
        await enqueue(tx, { kind: 'event', payload: { rolledBack: true }, recipients: [service.id], orderingKey: null });
        throw new Error('the change fails after enqueueing');
      }).catch((err: Error) => err.message);
      expect(failure).to.equal('the change fails after enqueueing');

      const [id] = await transaction(em, async (tx) => {
        const row = await tx.em.findOneOrFail(AccountSchema, { id: account.id });
        row.name = 'Renamed and committed';
        return enqueue(tx, { kind: 'event', payload: { committed: true }, recipients: [service.id], orderingKey: null });
      });
      await waitForState(sharedServer(), id!, 'delivered');
      const [request] = await receiver.waitFor(1);
      expect(request?.json).to.deep.equal({ committed: true });

      const log = await client(sharedServer().url).get<Array<{ payload: unknown }>>(`/adminApi/services/${service.id}/deliveries`, {
        token: await adminToken(),
      });
      expect(
        log.body.data.map((d) => d.payload),
        'the rolled-back delivery never existed',
      ).to.deep.equal([{ committed: true }]);
      const account2 = await em.fork().findOneOrFail(AccountSchema, { id: account.id });
      expect(account2.name).to.equal('Renamed and committed');
    });

    it('skips Services without a webhook URL', async () => {
      const account = await createAccount();
      const silent = await createService(account.id, { webhookUrl: null });
      const ids = await enqueueCommitted(sharedServer(), { recipients: [silent.id] });
      expect(ids).to.deep.equal([]);
    });
  });

  it('signs every request so that a Standard Webhooks receiver accepts it, and rejects a tampered body', async () => {
    const { service } = await serviceFor();
    const [id] = await enqueueCommitted(sharedServer(), { recipients: [service.id], payload: { hello: 'world' } });
    const [request] = await receiver.waitFor(1);
    expect(request?.headers['content-type']).to.equal('application/json');
    expect(webhookId(request)).to.equal(id);
    expect(Number(request?.headers['webhook-timestamp'])).to.be.closeTo(Date.now() / 1000, 60);
    expect(request?.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/=]+$/);

    expect(verify(service.signingSecret, request!)).to.deep.equal({ hello: 'world' });
    expect(() => verify(service.signingSecret, request!, '{"hello":"mallory"}')).to.throw(/signature/i);
    const otherSecret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    expect(() => verify(otherSecret, request!)).to.throw(/signature/i);
  });

  it('retries 5xx with the same webhook-id until it is delivered', async () => {
    const { service } = await serviceFor();
    receiver.enqueue({ status: 500 }, { status: 503 }).always({ status: 200 });
    const [id] = await enqueueCommitted(sharedServer(), { recipients: [service.id] });
    const row = await waitForState(sharedServer(), id!, 'delivered');
    expect(row.attempts).to.equal(3);
    expect(row.lastStatus).to.equal(200);
    const requests = await receiver.waitFor(3);
    expect(requests.map(webhookId)).to.deep.equal([id, id, id]);
    for (const r of requests) expect(verify(service.signingSecret, r)).to.deep.equal({ n: 1 });
  });

  it('gives up at once on a 400: one attempt, dead', async () => {
    const { service } = await serviceFor();
    receiver.always({ status: 400 });
    const [id] = await enqueueCommitted(sharedServer(), { recipients: [service.id] });
    const row = await waitForState(sharedServer(), id!, 'dead');
    expect(row).to.include({ attempts: 1, lastStatus: 400 });
    // A claim run after the death leaves the row as it was: dead, attempted once, nobody's.
    await sharedServer().deps.deliveries?.nextClaim();
    expect(await findDelivery(sharedServer().deps.db.orm.em.fork(), id!)).to.include({ state: 'dead', attempts: 1 });
    expect(await claimedBy(sharedServer(), id!)).to.equal(null);
    expect(receiver.requests).to.have.length(1);
  });

  it('moves a user’s chain on when its head dies', async () => {
    const { service } = await serviceFor();
    receiver.enqueue({ status: 400 }).always({ status: 200 });
    const ids: string[] = [];
    for (let n = 1; n <= 3; n++) {
      ids.push(...(await enqueueCommitted(sharedServer(), { recipients: [service.id], orderingKey: 42, payload: { n } })));
    }
    await waitForState(sharedServer(), ids[0]!, 'dead');
    await waitForState(sharedServer(), ids[2]!, 'delivered');
    expect(receiver.requests.map((r) => (r.json as { n: number }).n)).to.deep.equal([1, 2, 3]);
  });

  it('does not follow redirects: a 3xx is a failure', async () => {
    const { service } = await serviceFor();
    receiver.always({ status: 302, headers: { location: receiver.url + '/elsewhere' } });
    const [id] = await enqueueCommitted(sharedServer(), { recipients: [service.id] });
    const row = await waitForState(sharedServer(), id!, 'dead');
    expect(row.lastStatus).to.equal(302);
    expect(receiver.requests.map((r) => r.path)).to.deep.equal(['/hook']);
  });

  it('marks a delivery dead when every scheduled attempt failed', async () => {
    const { service } = await serviceFor();
    receiver.always({ status: 502 });
    const [id] = await enqueueCommitted(sharedServer(), { recipients: [service.id] });
    const row = await waitForState(sharedServer(), id!, 'dead');
    expect(row.attempts).to.equal(sharedServer().config.webhooks.retrySchedule.length);
    expect(row.lastError).to.contain('502');
  });

  it('honours Retry-After on a 429', async () => {
    const { service } = await serviceFor();
    receiver.enqueue({ status: 429, headers: { 'retry-after': '1' } }).always({ status: 200 });
    const [id] = await enqueueCommitted(sharedServer(), { recipients: [service.id] });
    await waitForState(sharedServer(), id!, 'delivered');
    const [first, second] = await receiver.waitFor(2);
    // The schedule alone would retry after ~0.2 s; the receiver asked for 1 s.
    expect(second!.at - first!.at).to.be.at.least(950);
  });

  it('times out a hanging receiver and tries again', async () => {
    const { service } = await serviceFor();
    receiver.enqueue({ hang: true }).always({ status: 200 });
    const [id] = await enqueueCommitted(sharedServer(), { recipients: [service.id] });
    const row = await waitForState(sharedServer(), id!, 'delivered');
    expect(row.attempts).to.equal(2);
    const requests = await receiver.waitFor(2);
    expect(requests.map(webhookId)).to.deep.equal([id, id]);
  });

  it('counts an answer whose body stalls or is cut off as failed, and tries again', async () => {
    // The status alone does not settle an attempt: the answer must end within the timeout.
    const { service } = await serviceFor();
    receiver.enqueue({ status: 200, cutBody: 'hang' }, { status: 200, cutBody: 'reset' }).always({ status: 200 });
    const [id] = await enqueueCommitted(sharedServer(), { recipients: [service.id] });
    const row = await waitForState(sharedServer(), id!, 'delivered');
    expect(row.attempts).to.equal(3);
    const requests = await receiver.waitFor(3);
    expect(requests.map(webhookId)).to.deep.equal([id, id, id]);
  });

  it('keeps one user’s deliveries in order while the first is retried, without holding up another user', async () => {
    const { service } = await serviceFor();
    const userA = 1_000_001;
    const userB = 1_000_002;
    let firstRefused = false;
    receiver.respondWith((request) => {
      const body = request.json as { user: number; n: number };
      if (body.user === userA && body.n === 1 && !firstRefused) {
        firstRefused = true;
        // Its retry waits until the operator asks below, however long writing the rest takes.
        return { status: 503, headers: { 'retry-after': '3600' } };
      }
      return undefined;
    });
    const ids: string[] = [];
    for (let n = 1; n <= 15; n++) {
      ids.push(...(await enqueueCommitted(sharedServer(), { recipients: [service.id], orderingKey: userA, payload: { user: userA, n } })));
    }
    for (let n = 1; n <= 5; n++) {
      await enqueueCommitted(sharedServer(), { recipients: [service.id], orderingKey: userB, payload: { user: userB, n } });
    }
    // A's first refused and B's five sent while it waits; then its retry, asked for now.
    await receiver.waitFor(6, 20_000);
    const retried = await client(sharedServer().url).post<{ retried: number }>(`/adminApi/services/${service.id}/deliveries/retry`, {
      token: await adminToken(),
    });
    expect(retried.body.data).to.deep.equal({ retried: 1 });
    await receiver.waitFor(21, 20_000);
    for (const id of ids) await waitForState(sharedServer(), id, 'delivered');

    const bodies = receiver.requests.map((r) => r.json as { user: number; n: number });
    const aOrder = bodies.filter((b) => b.user === userA).map((b) => b.n);
    expect(aOrder).to.deep.equal([1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    const bOrder = bodies.filter((b) => b.user === userB).map((b) => b.n);
    expect(bOrder).to.deep.equal([1, 2, 3, 4, 5]);
    // B's five went out while A's first waited for its retry.
    const retryOfA1 = bodies.findIndex((b, i) => b.user === userA && b.n === 1 && i > 0);
    const lastOfB = bodies.map((b) => b.user).lastIndexOf(userB);
    expect(lastOfB).to.be.lessThan(retryOfA1);
  });

  it('switches a Service off on 410 and sends what waited, in order, once it is enabled again', async () => {
    const { service } = await serviceFor();
    const api = client(sharedServer().url);
    const token = await adminToken();
    receiver.enqueue({ status: 410 }).always({ status: 200 });
    const ids: string[] = [];
    for (let n = 1; n <= 3; n++) {
      ids.push(...(await enqueueCommitted(sharedServer(), { recipients: [service.id], orderingKey: 7, payload: { n } })));
    }
    await receiver.waitFor(1);
    let shown = await api.get<{ services: Array<{ id: number; enabled: boolean; disabledReason: string | null }> }>(
      `/adminApi/accounts/${service.accountId}`,
      { token },
    );
    for (let i = 0; i < 100 && shown.body.data.services[0]?.enabled; i++) {
      await sleep(25);
      shown = await api.get(`/adminApi/accounts/${service.accountId}`, { token });
    }
    expect(shown.body.data.services[0]).to.include({ enabled: false, disabledReason: 'webhook_gone' });
    // A claim run after the Service was switched off takes none of its deliveries.
    await sharedServer().deps.deliveries?.nextClaim();
    for (const id of ids.slice(1))
      expect(await findDelivery(sharedServer().deps.db.orm.em.fork(), id)).to.include({ state: 'pending', attempts: 0 });
    for (const id of ids.slice(1)) expect(await claimedBy(sharedServer(), id)).to.equal(null);
    expect(receiver.requests, 'nothing is sent to a disabled Service').to.have.length(1);

    const enabled = await api.patch<{ enabled: boolean }>(`/adminApi/services/${service.id}`, {
      token,
      json: { enabled: true },
    });
    expect(enabled.status).to.equal(200);
    expect(enabled.body.data.enabled).to.equal(true);
    for (const id of ids) await waitForState(sharedServer(), id, 'delivered');
    expect(receiver.requests.map((r) => (r.json as { n: number }).n)).to.deep.equal([1, 1, 2, 3]);
  });

  it('lists deliveries for operators and redelivers a dead one', async () => {
    const { service } = await serviceFor();
    const api = client(sharedServer().url);
    const token = await adminToken();
    receiver.enqueue({ status: 422 }).always({ status: 200 });
    const [id] = await enqueueCommitted(sharedServer(), { recipients: [service.id], payload: { again: true } });
    await waitForState(sharedServer(), id!, 'dead');

    const dead = await api.get<Array<{ id: string; state: string; lastStatus: number }>>(
      `/adminApi/services/${service.id}/deliveries?state=dead`,
      { token },
    );
    expect(dead.status).to.equal(200);
    expect(dead.body.data).to.have.length(1);
    expect(dead.body.data[0]).to.include({ id, state: 'dead', lastStatus: 422 });

    const notDeadYet = await api.post(`/adminApi/deliveries/${id}/redeliver`, { token });
    expect(notDeadYet.status).to.equal(200);
    await waitForState(sharedServer(), id!, 'delivered');
    const requests = await receiver.waitFor(2);
    expect(requests.map(webhookId)).to.deep.equal([id, id]);

    const again = await api.post(`/adminApi/deliveries/${id}/redeliver`, { token });
    expect(again.status).to.equal(409);
    expect(again.body.notifications[0]?.message).to.equal('delivery_not_dead');
    const unknown = await api.post('/adminApi/deliveries/00000000-0000-4000-8000-000000000000/redeliver', { token });
    expect(unknown.status).to.equal(404);
    const malformed = await api.post('/adminApi/deliveries/not-a-uuid/redeliver', { token });
    expect(malformed.status).to.equal(422);
    const badState = await api.get(`/adminApi/services/${service.id}/deliveries?state=lost`, { token });
    expect(badState.status).to.equal(422);
  });

  it("sends a Service's waiting deliveries now when an operator asks, in order, and no other Service's", async () => {
    const { account, service } = await serviceFor();
    const other = await createService(account.id, { webhookUrl: receiver.url + '/other' });
    const api = client(sharedServer().url);
    const token = await adminToken();
    // Down for an hour, as far as the schedule knows: each Service's first attempt is answered so.
    const refused = new Set<string>();
    receiver.respondWith((request) => {
      if (refused.has(request.path)) return undefined;
      refused.add(request.path);
      return { status: 503, headers: { 'retry-after': '3600' } };
    });
    const [head] = await enqueueCommitted(sharedServer(), { recipients: [service.id], orderingKey: 9, payload: { n: 1 } });
    const [behind] = await enqueueCommitted(sharedServer(), { recipients: [service.id], orderingKey: 9, payload: { n: 2 } });
    const [elsewhere] = await enqueueCommitted(sharedServer(), { recipients: [other.id], orderingKey: 9, payload: { n: 1 } });
    await receiver.waitFor(2);

    type Row = { id: string; state: string; attempts: number; nextAttemptAt: string | null; waitsForEarlier: boolean };
    const log = async (serviceId: number) => (await api.get<Row[]>(`/adminApi/services/${serviceId}/deliveries`, { token })).body.data;
    // The attempt counts from its claim; its outcome (the hour's wait) is committed after the
    // receiver answered: read until the outcome is there.
    const answered = (r: Row | undefined) =>
      r?.attempts === 1 && r.nextAttemptAt !== null && Date.parse(r.nextAttemptAt) > Date.now() + 60_000;
    let rows = await log(service.id);
    for (let i = 0; i < 200 && !answered(rows.find((r) => r.id === head)); i++) {
      await sleep(25);
      rows = await log(service.id);
    }
    const waiting = rows.find((r) => r.id === head);
    expect(waiting).to.include({ state: 'pending', attempts: 1, waitsForEarlier: false });
    expect(Date.parse(waiting!.nextAttemptAt!)).to.be.greaterThan(Date.now() + 3_000_000);
    expect(rows.find((r) => r.id === behind)).to.include({ state: 'pending', attempts: 0, nextAttemptAt: null, waitsForEarlier: true });

    const retried = await api.post<{ retried: number }>(`/adminApi/services/${service.id}/deliveries/retry`, { token });
    expect(retried.status, retried.text).to.equal(200);
    expect(retried.body.data).to.deep.equal({ retried: 1 });
    await waitForState(sharedServer(), behind!, 'delivered');
    const sent = receiver.requests.filter((r) => r.path === '/hook').map((r) => (r.json as { n: number }).n);
    expect(sent).to.deep.equal([1, 1, 2]);
    expect((await log(service.id)).find((r) => r.id === head)).to.include({ state: 'delivered', attempts: 2 });

    const otherRows = await log(other.id);
    expect(otherRows.find((r) => r.id === elsewhere)).to.include({ state: 'pending', attempts: 1 });
    const none = await api.post<{ retried: number }>(`/adminApi/services/${service.id}/deliveries/retry`, { token });
    expect(none.body.data).to.deep.equal({ retried: 0 });
    const unknown = await api.post('/adminApi/services/2000000000/deliveries/retry', { token });
    expect(unknown.status).to.equal(404);
  });

  it('pages through the deliveries log, newest first', async () => {
    const { service } = await serviceFor();
    const token = await adminToken();
    const api = client(sharedServer().url);
    for (let n = 1; n <= 5; n++) await enqueueCommitted(sharedServer(), { recipients: [service.id], payload: { n } });
    const page1 = await api.get<Array<{ payload: { n: number } }>>(`/adminApi/services/${service.id}/deliveries?limit=3`, { token });
    expect(page1.body.data.map((d) => d.payload.n)).to.deep.equal([5, 4, 3]);
    const before = (page1.body as unknown as { paging: { before: number } }).paging.before;
    const page2 = await api.get<Array<{ payload: { n: number } }>>(`/adminApi/services/${service.id}/deliveries?limit=3&before=${before}`, {
      token,
    });
    expect(page2.body.data.map((d) => d.payload.n)).to.deep.equal([2, 1]);
    expect((page2.body as unknown as { paging: { before: number | null } }).paging.before).to.equal(null);
  });

  it('gives back a delivery it claimed ahead but did not send when it stops: due again, the attempt not counted', async () => {
    const server = await startTestServer({ webhooks: { maxInFlight: 1, maxPerService: 1 } });
    const held = gate();
    const ids: string[] = [];
    try {
      const em = server.deps.db.orm.em.fork();
      const account = await createAccountIn(em, { name: 'Claims ahead' });
      const created = await createServiceIn(em, account.id, { name: 'Slow', webhookUrl: `${receiver.url}/hook` });
      // The first attempt is answered only once the node stops: the second is claimed meanwhile and waits.
      receiver.enqueue({ status: 200, until: held.closed });
      for (const key of [1, 2]) ids.push(...(await enqueueCommitted(server, { recipients: [created?.service.id ?? 0], orderingKey: key })));
      await receiver.waitFor(1);
      for (let i = 0; i < 200 && !(await claimedBy(server, ids[1] ?? '')); i++) await sleep(10);
      expect(await claimedBy(server, ids[1] ?? ''), 'claimed ahead').to.be.a('string');
    } finally {
      await closeWhileHeld(server, held);
    }
    const rows = await withDatabase(server.database, (em) =>
      em
        .getConnection()
        .execute<Array<{ id: string; state: string; attempts: number; claimed_by: string | null }>>(
          `select id, state, attempts, claimed_by from deliveries where id = any(?::uuid[])`,
          [`{${ids.join(',')}}`],
        ),
    );
    await server.database.drop();
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(ids[0] ?? '')).to.include({ state: 'delivered', attempts: 1 });
    expect(byId.get(ids[1] ?? '')).to.include({ state: 'pending', attempts: 0, claimed_by: null });
    expect(receiver.requests).to.have.length(1);
  });

  it('reports deliveries in the metrics', async () => {
    const { service } = await serviceFor();
    const [id] = await enqueueCommitted(sharedServer(), { recipients: [service.id] });
    await waitForState(sharedServer(), id!, 'delivered');
    const metrics = await client(sharedServer().url).get('/metrics');
    expect(metrics.text).to.match(/palaver_delivery_attempts_total\{outcome="delivered"\} [1-9]/);
    expect(metrics.text).to.match(/palaver_deliveries_pending \d+/);
    expect(metrics.text).to.contain('palaver_delivery_attempt_duration_seconds_bucket');
  });

  describe('with private addresses not allowed (the production default)', () => {
    it('refuses to connect to loopback, judged by the resolved address', async () => {
      const server = await startTestServer({ webhooks: { allowPrivate: false } });
      try {
        const api = client(server.url);
        const login = await api.post<{ token: string }>('/adminApi/login', {
          json: { email: server.config.admin.email, password: server.config.admin.password },
        });
        const token = login.body.data.token;
        // The dashboard warns of a private webhook URL from this.
        const session = await api.get<{ server: { privateWebhookAddresses: boolean } }>('/adminApi/session', { token });
        expect(session.body.data.server).to.deep.equal({ privateWebhookAddresses: false });
        const account = await api.post<{ id: number }>('/adminApi/accounts', { token, json: { name: 'SSRF' } });
        // "localhost" is a name; the filter looks at what it resolves to.
        const port = new URL(receiver.url).port;
        const service = await api.post<{ id: number }>(`/adminApi/accounts/${account.body.data.id}/services`, {
          token,
          json: { name: 'Internal', webhookUrl: `http://localhost:${port}/hook` },
        });
        const [id] = await enqueueCommitted(server, { recipients: [service.body.data.id] });
        const row = await waitForState(server, id!, 'dead');
        expect(row.lastError).to.match(/not allowed/i);
        expect(receiver.requests).to.have.length(0);
      } finally {
        await server.stop();
      }
    });
  });
});
