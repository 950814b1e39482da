// Three Palaver server processes on one PostgreSQL and one Redis (the socket.io-redis-adapter
// test layout, with real processes): emits from any node reach sockets on every node, merges
// move sockets everywhere, what a node missed while its Redis subscriber was away reaches its
// sockets when the subscriber is back (the resync, without the client reconnecting), and a
// Redis that goes away and comes back loses nothing once clients catch up.
//
// Needs PostgreSQL (TEST_DATABASE_URL) and Redis (TEST_REDIS_URL, as in CI's PostgreSQL step;
// the test starts a redis-server of its own on another port, so that it can stop it).
import { expect } from 'chai';
import { createTestDatabase, mode, type TestDatabase } from './support/database.ts';
import { client } from './support/http.ts';
import { nodeEnv, startProcess, type ServerProcess } from './support/process.ts';
import { Receiver } from './support/receiver.ts';
import { freePort, TestRedis } from './support/redis.ts';
import { until } from './support/until.ts';
import { WidgetSocket } from './support/sockets.ts';
import { Widget } from './support/widget.ts';

const ADMIN = { email: 'nodes@palaver.test', password: 'three nodes password' };

// Skipped, with the reason in its title, where there is no PostgreSQL and Redis to run on;
// CI's PostgreSQL step (.ci/run) sets both.
const NEEDS = 'needs TEST_DATABASE_URL and TEST_REDIS_URL (PostgreSQL and Redis), and redis-server on PATH';
const runs = mode === 'postgresql' && Boolean(process.env.TEST_REDIS_URL);

(runs ? describe : describe.skip)(`real-time gateway on three nodes${runs ? '' : ` (skipped: ${NEEDS})`}`, function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let redis: TestRedis;
  let nodes: ServerProcess[];
  let receiver: Receiver;
  const sockets: WidgetSocket[] = [];
  let account: { id: number; identification: string; authorizationSecret: string; name: string; defaultServiceId: number | null };
  let apiKey: string;

  before(async () => {
    database = await createTestDatabase('nodes');
    redis = new TestRedis(await freePort());
    await redis.start();
    receiver = await Receiver.start();
    const env = nodeEnv(database, redis.url, ADMIN);
    nodes = [];
    for (let i = 0; i < 3; i++) nodes.push(await startProcess(env));
    const api = client(nodes[0]!.url);
    const token = (await api.post<{ token: string }>('/adminApi/login', { json: ADMIN })).body.data.token;
    const created = (await api.post<typeof account>('/adminApi/accounts', { token, json: { name: 'Nodes' } })).body.data;
    const service = (
      await api.post<{ id: number; apiKey: string }>(`/adminApi/accounts/${created.id}/services`, {
        token,
        json: { name: 'Bot', webhookUrl: `${receiver.url}/hook` },
      })
    ).body.data;
    account = { ...created, defaultServiceId: service.id };
    apiKey = service.apiKey;
  });

  after(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await Promise.all(nodes.map((n) => n.stop('SIGTERM')));
    await receiver.close();
    await redis.stop();
    await database.drop();
  });

  /** A node that died fails the test that killed it, with what it printed last, not a later "fetch failed". */
  const expectNodesRunning = () => {
    for (const [i, node] of nodes.entries()) {
      if (!node.running())
        throw new Error(`node ${i} exited (${node.child.exitCode ?? node.child.signalCode}):\n${node.output().slice(-2500)}`);
    }
  };
  afterEach(function () {
    if (this.currentTest?.state !== 'failed') expectNodesRunning();
  });

  const onNode = (index: number) => nodes[index]!.url;
  const agentSays = (index: number, userId: number, message: string) =>
    client(onNode(index)).post<{ id: number }>(`/users/${userId}/messages`, {
      token: apiKey,
      json: { message, agent: { id: 1, name: 'Node agent' } },
    });
  const socketOn = async (index: number, widget: Widget) => {
    const socket = new WidgetSocket(widget, { baseUrl: onNode(index) });
    sockets.push(socket);
    await socket.connected();
    return socket;
  };

  it('a message sent on node A reaches a socket on node C', async () => {
    const widget = new Widget(account, undefined, undefined, '', onNode(2));
    const userId = (await widget.register()).body.data.userId;
    const onC = await socketOn(2, widget);
    const sent = await agentSays(0, userId, 'from node A');
    await onC.expectExactly({ message: 1, agent: 1 });
    expect(onC.messages()[0]).to.deep.include({ id: sent.body.data.id, message: 'from node A' });
    expect(onC.events('agent')[0]).to.deep.include({ agent: { id: 1, name: 'Node agent', avatar: null, isTyping: null } });
  });

  it('a merge on node B moves the socket on node A that presented the header, and disconnects the one on node C that did not', async () => {
    const widget = new Widget(account, undefined, undefined, '', onNode(1));
    await widget.register();
    const deviceOnlyOnC = await socketOn(2, widget);
    widget.signIn('customer-on-three-nodes');
    const onA = await socketOn(0, widget);
    const ended = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the socket on node C was not disconnected at the merge')), 10_000);
      deviceOnlyOnC.socket.once('disconnect', (why: string) => (clearTimeout(timer), resolve(why)));
    });
    const registeredId = (await widget.register()).body.data.userId;
    await onA.expectExactly({ merged: 1 });
    expect(onA.events('merged')[0]).to.deep.equal({ userId: registeredId });
    expect(await ended).to.equal('io server disconnect');
    expect(deviceOnlyOnC.pushed).to.deep.equal([{ event: 'unauthorized', payload: { code: 'authorization_required' } }]);
    await agentSays(2, registeredId, 'to the registered user');
    await onA.expectExactly({ merged: 1, message: 1, agent: 1 });
    expect(onA.messages()[0]).to.deep.include({ message: 'to the registered user' });
    expect(deviceOnlyOnC.messages()).to.deep.equal([]);
  });

  it("an erasure on node B disconnects the erased user's sockets on node C, with device_not_found, and logs no error", async () => {
    const widget = new Widget(account, undefined, undefined, '', onNode(1));
    const userId = (await widget.register()).body.data.userId;
    const onC = await socketOn(2, widget);
    const gone = new Promise<string>((resolve) => onC.socket.once('disconnect', resolve));
    const api = client(onNode(1));
    const token = (await api.post<{ token: string }>('/adminApi/login', { json: ADMIN })).body.data.token;
    expect((await api.delete(`/adminApi/accounts/${account.id}/users/${userId}`, { token })).status).to.equal(200);
    expect(await gone).to.equal('io server disconnect');
    expect(onC.events('unauthorized')).to.deep.equal([{ code: 'device_not_found' }]);
    expect(nodes[2]!.output(), 'node C').not.to.match(/"level":(50|60)/);
  });

  it('a key revoked or a Service disabled on node A is refused by nodes B and C, which had it in use', async () => {
    const api = client(onNode(0));
    const token = (await api.post<{ token: string }>('/adminApi/login', { json: ADMIN })).body.data.token;
    const serviceId = account.defaultServiceId as number;
    const added = (await api.post<{ id: number; apiKey: string }>(`/adminApi/services/${serviceId}/keys`, { token })).body.data;
    const userId = (await new Widget(account, undefined, undefined, '', onNode(0)).register()).body.data.userId;
    const statusOn = async (index: number, key: string) => (await client(onNode(index)).get(`/users/${userId}`, { token: key })).status;
    // Each node keeps a key it has read (api/service/caller.ts) for 10 s; within that, only the
    // account notice from node A can make B and C refuse it, so the polls stop well before.
    const refusedBy = async (index: number, key: string, status: number) => {
      const until = Date.now() + 4_000;
      for (;;) {
        const now = await statusOn(index, key);
        if (now === status) return;
        if (Date.now() > until) throw new Error(`node ${index} still answers ${now}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    for (const index of [1, 2]) expect(await statusOn(index, added.apiKey)).to.equal(200);
    expect((await api.delete(`/adminApi/services/${serviceId}/keys/${added.id}`, { token })).status).to.equal(200);
    for (const index of [1, 2]) await refusedBy(index, added.apiKey, 401);

    for (const index of [1, 2]) expect(await statusOn(index, apiKey)).to.equal(200);
    expect((await api.patch(`/adminApi/services/${serviceId}`, { token, json: { enabled: false } })).status).to.equal(200);
    for (const index of [1, 2]) await refusedBy(index, apiKey, 403);
    expect((await api.patch(`/adminApi/services/${serviceId}`, { token, json: { enabled: true } })).status).to.equal(200);
    for (const index of [1, 2]) await refusedBy(index, apiKey, 200);
  });

  it('resyncs after its Redis subscriber was away: a message written meanwhile on node A reaches a socket on node B without a reconnect', async () => {
    const widget = new Widget(account, undefined, undefined, '', onNode(1));
    const userId = (await widget.register()).body.data.userId;
    const onB = await socketOn(1, widget);
    const before = await agentSays(0, userId, 'before the cut');
    await onB.expectExactly({ message: 1, agent: 1 });
    const socketId = onB.socket.id;

    // Every node's subscriber is cut off and kept off; the publishers stay connected, so node
    // A's notice is published (not queued for later) and reaches no node: it is lost.
    let duringId: number | undefined;
    try {
      expect(await redis.cutSubscribers(), 'one subscriber per node').to.equal(nodes.length);
      const during = await agentSays(0, userId, 'while no node listens');
      expect(during.status).to.equal(201);
      duringId = during.body.data.id;
      expect(await redis.subscribers(), 'still no subscriber after the write: the notice reached nobody').to.equal(0);
      await onB.roundTrip();
      expect(
        onB.messages().map((m) => m.id),
        'node B cannot know yet',
      ).to.deep.equal([before.body.data.id]);
    } finally {
      // The subscribers come back on their own. Nothing else happens: no other message, no
      // reconnect; node B reads its sockets' feeds again because its subscriber is ready again.
      await redis.admitClients();
    }
    await onB.waitFor('message', 2, 30_000);
    // Node B's subscriber is back; the others reconnect on their own backoff, perhaps a moment later.
    await until(
      'every node subscribed again',
      () => redis.subscribers(),
      (count) => count === nodes.length,
    );
    expect(onB.socket.id, 'the same connection: the client did not reconnect').to.equal(socketId);
    expect(onB.socket.connected).to.equal(true);

    // Live again: a message from node C arrives through the notices.
    const after = await agentSays(2, userId, 'after the cut');
    await onB.expectExactly({ message: 3, agent: 1 });
    const ids = [before.body.data.id, duringId, after.body.data.id];
    expect(onB.messages().map((m) => m.id)).to.deep.equal(ids);
    const history = await widget.messages();
    expect(history.body.data.map((m) => m.id).reverse()).to.deep.equal(ids);
  });

  it('loses nothing when Redis stops and starts again, once clients catch up', async () => {
    const widget = new Widget(account, undefined, undefined, '', onNode(2));
    const userId = (await widget.register()).body.data.userId;
    const onC = await socketOn(2, widget);
    const before = await agentSays(0, userId, 'before the outage');
    await onC.expectExactly({ message: 1, agent: 1 });

    await redis.stop();
    const during: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const answer = await agentSays(0, userId, `during ${i}`);
      expect(answer.status, 'writes go on without Redis').to.equal(201);
      during.push(answer.body.data.id);
    }
    const ready = await client(onNode(0)).get<{ checks: Record<string, string> }>('/readyz');
    expect(ready.status, 'readiness reports the outage but keeps the node in').to.equal(200);
    expect(ready.body.data.checks.redis).to.equal('degraded');
    // An outage of seconds, not of the few milliseconds the writes took: longer than a Redis
    // client keeps a command it could not send (ioredis gives up after maxRetriesPerRequest
    // reconnection attempts, about 0.3 s here), so node A's notices are given up, not sent late.
    await new Promise((r) => setTimeout(r, 3000));
    expectNodesRunning();

    await redis.start();
    // A client that lost its connection comes back with the last message it has.
    await onC.reconnect();
    const after = await agentSays(1, userId, 'after the outage');
    await onC.waitForExactly('message', 7, 30_000);
    expect(onC.messages().map((m) => m.id)).to.deep.equal([before.body.data.id, ...during, after.body.data.id]);
    const history = await widget.messages();
    expect(history.body.data.map((m) => m.id).reverse()).to.deep.equal(onC.messages().map((m) => m.id));
  });
});
