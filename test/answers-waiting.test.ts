// Issue 37: past its CPU a node whose webhooks are out can still take customers' messages faster
// than it writes the Services' answers, and every conversation then waits longer, until none is
// answered within the minute. It refuses new customer messages (503 server_busy, reason
// answers_waiting) while the answers wait longer than client.admission.maxAnswerWaitMs and its
// event loop is full. Either alone refuses nothing: slow answers with the loop free (the
// database's sign, database_wait, is for that), or a busy loop with no answer waiting.
import { expect } from 'chai';
import { Admission, type LoadSigns, type RefusalReason } from '../src/http/admission.ts';
import { WriteWaits } from '../src/db/tx/write-waits.ts';
import { AppError } from '../src/errors.ts';
import { createAccount } from '../src/tenancy/accounts.ts';
import { createService } from '../src/tenancy/services.ts';
import { fillEventLoop } from './support/busy-loop.ts';
import { client } from './support/http.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { WidgetSocket } from './support/sockets.ts';
import { until } from './support/until.ts';
import { Widget } from './support/widget.ts';

describe('WriteWaits: how long a writer’s callers wait now', () => {
  let now = 0;
  const clock = () => now;

  beforeEach(() => {
    now = 10_000;
  });

  it('is the mean of the writes answered over the last second, and forgets older ones', () => {
    const waits = new WriteWaits(clock);
    expect(waits.waitMs()).to.equal(0);
    const first = waits.begin();
    now += 100;
    first();
    const second = waits.begin();
    now += 300;
    second();
    expect(waits.waitMs()).to.equal(200);
    // Answered twice counts once.
    second();
    expect(waits.waitMs()).to.equal(200);
    // Past the window (four buckets of 250 ms), both are forgotten.
    now += 1_000;
    expect(waits.waitMs()).to.equal(0);
  });

  it('counts a write still open once it is older than a second, before any is answered', () => {
    const waits = new WriteWaits(clock);
    const stuck = waits.begin();
    now += 900;
    expect(waits.waitMs(), 'open for less than a second: not yet').to.equal(0);
    now += 600;
    expect(waits.waitMs()).to.equal(1_500);
    stuck();
    expect(waits.waitMs()).to.equal(1_500);
    now += 1_000;
    expect(waits.waitMs()).to.equal(0);
  });
});

describe('admission: the answers’ wait with the event loop', () => {
  const options = {
    maxWritesInFlight: 100,
    maxDatabaseWaitMs: 500,
    maxDeliveriesBehindMs: 2_000,
    maxAnswerWaitMs: 100,
    fullEventLoop: 0.95,
    retryAfterSeconds: 3,
  };
  const admitted = (signs: Partial<LoadSigns>): RefusalReason | 'admitted' => {
    let reason: RefusalReason | 'admitted' = 'admitted';
    const admission = new Admission(
      options,
      (r) => {
        reason = r;
      },
      { databaseWaitMs: () => 0, deliveriesBehindMs: () => 0, eventLoopBusy: () => 0, answersWaitMs: () => 0, ...signs },
    );
    try {
      admission.enter()();
    } catch (err) {
      expect(err).to.be.instanceOf(AppError);
      expect((err as AppError).code).to.equal('server_busy');
      expect((err as AppError).status).to.equal(503);
    }
    return reason;
  };

  it('refuses only while the answers wait and the loop is full', () => {
    expect(admitted({ answersWaitMs: () => 150, eventLoopBusy: () => 0.97 })).to.equal('answers_waiting');
    expect(admitted({ answersWaitMs: () => 150, eventLoopBusy: () => 0.9 }), 'the loop not full').to.equal('admitted');
    expect(admitted({ answersWaitMs: () => 90, eventLoopBusy: () => 1 }), 'the answers in time').to.equal('admitted');
    expect(admitted({ eventLoopBusy: () => 1 }), 'a busy loop alone').to.equal('admitted');
  });

  it('names the deliveries behind first when both hold', () => {
    expect(admitted({ answersWaitMs: () => 150, deliveriesBehindMs: () => 3_000, eventLoopBusy: () => 1 })).to.equal('deliveries_behind');
  });
});

describe('admission: answers waiting while the event loop is full, on a node', function () {
  this.timeout(60_000);
  let server: TestServer;
  let socket: WidgetSocket | undefined;
  let stopBusy: (() => void) | undefined;

  before(async () => {
    server = await startTestServer({
      client: { admission: { maxAnswerWaitMs: 30, fullEventLoop: 0.5, retryAfterSeconds: 4 } },
    });
  });

  after(async () => {
    stopBusy?.();
    socket?.socket.disconnect();
    await server.stop();
  });

  const refusals = async () => {
    const text = (await client(server.url).get('/metrics')).text;
    return Number(/palaver_client_writes_refused_total\{reason="answers_waiting"\} (\d+)/.exec(text)?.[1] ?? 0);
  };

  it('refuses customers while answers wait with the loop full, explicitly, and takes them again once the answers are written', async () => {
    const em = server.deps.db.orm.em.fork();
    const account = await createAccount(em, { name: 'Answered' });
    // No webhook: the test answers as the Service would, through the Service API.
    const created = await createService(em, account.id, { name: 'Desk' });
    const apiKey = created?.apiKey ?? '';
    const widget = new Widget({ ...account, defaultServiceId: created?.service.id ?? null }, undefined, undefined, '', server.url);
    const registered = await widget.register();
    expect(registered.status, registered.text).to.equal(200);
    const userId = registered.body.data.userId;
    socket = new WidgetSocket(widget);
    await socket.connected();
    const answer = (message: string) =>
      client(server.url).post(`/serviceApi/v2.3/users/${userId}/messages`, {
        token: apiKey,
        json: { message, agent: { id: 1, name: 'Ada' } },
      });
    const send = (message: string) => socket?.emit('message', { message }) ?? Promise.reject(new Error('no socket'));

    // Answers with the loop free: however long they take, customers are taken.
    expect((await answer('before the load')).status).to.equal(201);
    expect((await send('with the loop free')).data.messageId).to.be.a('string');
    expect(await refusals()).to.equal(0);

    // The loop full (this process runs the server): each answer waits behind it, and customers are refused.
    stopBusy = fillEventLoop();
    const refused = await until(
      'a refusal while the answers wait',
      async () => {
        expect((await answer('under load')).status).to.equal(201);
        return send('while the answers wait');
      },
      (reply) => reply.data?.messageId === undefined,
    );
    expect(refused.notifications.map((n) => n.message)).to.deep.equal(['server_busy']);
    expect(refused.data).to.deep.equal({ retryAfter: 4 });
    // One scrape, within the second the wait is counted over.
    const scraped = (await client(server.url).get('/metrics')).text;
    expect(Number(/palaver_client_writes_refused_total\{reason="answers_waiting"\} (\d+)/.exec(scraped)?.[1])).to.be.greaterThan(0);
    expect(Number(/^palaver_answers_wait_seconds (\S+)$/m.exec(scraped)?.[1]), 'the gauge shows the wait').to.be.greaterThan(0.03);

    // The answers written, and none since: with the loop still full, customers are taken again.
    await until(
      'a customer taken once the answers are out',
      () => send('once the answers are written'),
      (reply) => typeof reply.data?.messageId === 'string',
    );
    stopBusy?.();
  });
});
