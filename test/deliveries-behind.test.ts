// Issue 37: past its CPU a node takes customers' messages faster than it sends their webhooks,
// and the outbox, with every answer behind it, only grows. It then refuses new customer messages
// (503 server_busy, reason deliveries_behind) while its delivery worker has been behind for a
// while and its event loop is full. Either alone refuses nothing: a worker behind on a slow
// Service's deliveries with the loop free, or a busy loop with the worker caught up.
import { expect } from 'chai';
import { io, type Socket } from 'socket.io-client';
import { createAccount } from '../src/tenancy/accounts.ts';
import { createService } from '../src/tenancy/services.ts';
import { enqueueCommitted } from './support/deliveries.ts';
import { fillEventLoop } from './support/busy-loop.ts';
import { client } from './support/http.ts';
import { gate, Receiver } from './support/receiver.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';
import { Widget } from './support/widget.ts';

interface AckEnvelope {
  data: { messageId?: string; retryAfter?: number } | null;
  notifications: Array<{ message: string }>;
}

describe('admission: deliveries behind while the event loop is full', function () {
  this.timeout(60_000);
  let receiver: Receiver;
  let server: TestServer;
  let socket: Socket | undefined;
  let stopBusy: (() => void) | undefined;
  const held = gate();

  before(async () => {
    receiver = await Receiver.start();
    server = await startTestServer({
      // One slot: a Service that holds its first webhook keeps the rest due, and the worker behind.
      webhooks: { maxInFlight: 1, maxPerService: 1, timeoutMs: 20_000 },
      client: { admission: { maxDeliveriesBehindMs: 300, fullEventLoop: 0.5, retryAfterSeconds: 4 } },
    });
  });

  after(async () => {
    stopBusy?.();
    socket?.disconnect();
    held.open();
    await server.stop();
    await receiver.close();
  });

  const send = (message: string) => new Promise<AckEnvelope>((resolve) => socket?.emit('message', { message }, resolve));
  const refusals = async () => {
    const text = (await client(server.url).get('/metrics')).text;
    return Number(/palaver_client_writes_refused_total\{reason="deliveries_behind"\} (\d+)/.exec(text)?.[1] ?? 0);
  };

  it('refuses customers only while both hold, explicitly, and takes them again once the worker catches up', async () => {
    const em = server.deps.db.orm.em.fork();
    const slow = await createAccount(em, { name: 'Slow Service' });
    const created = await createService(em, slow.id, { name: 'Held', webhookUrl: `${receiver.url}/hook` });
    const serviceId = created?.service.id ?? 0;
    receiver.always({ status: 200, until: held.closed });

    // A customer of another account, whose Service has no webhook: its messages are sent nowhere.
    const other = await createAccount(em, { name: 'Customers' });
    await createService(em, other.id, { name: 'Quiet' });
    const widget = new Widget({ ...other, defaultServiceId: null }, undefined, undefined, '', server.url);
    const registered = await widget.register();
    expect(registered.status, registered.text).to.equal(200);
    socket = io(server.url, {
      path: '/socket.io',
      transports: ['websocket'],
      reconnection: false,
      auth: { identification: `${other.identification}:${widget.deviceId}` },
    });
    await new Promise<void>((resolve, reject) => {
      socket?.once('connect', () => resolve());
      socket?.once('connect_error', reject);
    });

    // The slow Service's deliveries: one in flight, held; the others due behind it.
    for (const key of [1, 2, 3, 4, 5]) await enqueueCommitted(server, { recipients: [serviceId], orderingKey: key });
    const worker = server.deps.deliveries;
    if (!worker) throw new Error('the test server runs no delivery worker');
    await until(
      'the worker behind for longer than the bound',
      () => Promise.resolve(worker.behindMs()),
      (ms) => ms > 600,
    );

    // Behind, with the loop free: taken.
    expect((await send('while the Service is slow')).data?.messageId).to.be.a('string');
    expect(await refusals()).to.equal(0);

    // The loop full as well (this process runs the server): refused, with the wait to retry after.
    stopBusy = fillEventLoop();
    const refused = await until(
      'a refusal',
      () => send('while the node is full'),
      (answer) => answer.data?.messageId === undefined,
    );
    expect(refused.notifications.map((n) => n.message)).to.deep.equal(['server_busy']);
    expect(refused.data).to.deep.equal({ retryAfter: 4 });
    expect(await refusals()).to.be.greaterThan(0);

    // The Service answers: the worker catches up, and with the loop still full the node takes them again.
    held.open();
    await until(
      'the worker caught up',
      () => Promise.resolve(worker.behindMs()),
      (ms) => ms === 0,
    );
    expect((await send('once the webhooks are out')).data?.messageId).to.be.a('string');
    stopBusy?.();
  });
});
