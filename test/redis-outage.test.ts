// Redis is an optimisation, never a single point of failure: two Palaver server processes on one
// PostgreSQL and a Redis of the test's own, which is down when the first node starts and is
// killed (SIGKILL) under load later. No node exits; REST and each node's own sockets go on;
// rate limits fall back to each node's memory; readiness says Redis is degraded but keeps the
// node in (200); when Redis is back the nodes connect by themselves and sockets on the other
// node catch up, without reconnecting.
//
// Needs PostgreSQL (TEST_DATABASE_URL) and Redis (TEST_REDIS_URL, as in CI's PostgreSQL step;
// the test starts and kills a redis-server of its own on another port).
import { expect } from 'chai';
import pg from 'pg';
import { createTestDatabase, mode, type TestDatabase } from './support/database.ts';
import { client } from './support/http.ts';
import { startProcess, type ServerProcess } from './support/process.ts';
import { freePort, TestRedis } from './support/redis.ts';
import type { AccountData } from './support/factories.ts';
import { WidgetSocket } from './support/sockets.ts';
import { Widget } from './support/widget.ts';

const ADMIN = { email: 'outage@palaver.test', password: 'redis outage password' };

interface Readiness {
  status: string;
  checks: Record<string, string>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Skipped, with the reason in its title, where there is no PostgreSQL and Redis to run on.
const NEEDS = 'needs TEST_DATABASE_URL and TEST_REDIS_URL (PostgreSQL and Redis), and redis-server on PATH';
const runs = mode === 'postgresql' && Boolean(process.env.TEST_REDIS_URL);
if (!runs) process.stdout.write(`redis-outage.test.ts skipped: ${NEEDS}\n`);

(runs ? describe : describe.skip)(`Redis outages on two nodes${runs ? '' : ` (skipped: ${NEEDS})`}`, function () {
  this.timeout(180_000);
  let database: TestDatabase;
  let redis: TestRedis;
  let env: Record<string, string | undefined>;
  let redisUp = false;
  const nodes: ServerProcess[] = [];
  const sockets: WidgetSocket[] = [];
  let account: AccountData | undefined;

  before(async () => {
    database = await createTestDatabase('outage');
    // Not started: the first node starts without it.
    redis = new TestRedis(await freePort());
    env = {
      DATABASE_URL: database.databaseUrl,
      PALAVER_DATA_DIR: database.dataDir,
      REDIS_URL: redis.url,
      PALAVER_ADMIN_EMAIL: ADMIN.email,
      PALAVER_ADMIN_PASSWORD: ADMIN.password,
    };
  });

  after(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await Promise.all(nodes.map((n) => n.stop('SIGTERM')));
    await redis.stop();
    await database.drop();
  });

  /** A node that died fails the test, with what it printed last, not a later "fetch failed". */
  const expectNodesRunning = () => {
    for (const [i, node] of nodes.entries()) {
      if (!node.running())
        throw new Error(`node ${i} exited (${node.child.exitCode ?? node.child.signalCode}):\n${node.output().slice(-3000)}`);
    }
  };
  afterEach(function () {
    if (this.currentTest?.state !== 'failed') expectNodesRunning();
  });

  const readiness = (index: number) => client(nodes[index]!.url).get<Readiness>('/readyz');
  /** Polls /readyz until it reports Redis as `state` (always with 200: Redis never fails the node). */
  const waitForRedisCheck = async (index: number, state: 'ok' | 'degraded', timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      expectNodesRunning();
      const ready = await readiness(index);
      expect(ready.status, `node ${index} /readyz: ${ready.text}`).to.equal(200);
      expect(ready.body.data.checks.database).to.equal('ok');
      if (ready.body.data.checks.redis === state) return ready;
      if (Date.now() > deadline) throw new Error(`node ${index}: redis still ${ready.body.data.checks.redis}, not ${state}`);
      await sleep(100);
    }
  };
  const ensureAccount = async (): Promise<AccountData> => {
    if (account) return account;
    const api = client(nodes[0]!.url);
    const login = await api.post<{ token: string }>('/adminApi/login', { json: ADMIN });
    expect(login.status, login.text).to.equal(200);
    const created = await api.post<AccountData>('/adminApi/accounts', { token: login.body.data.token, json: { name: 'Outage' } });
    expect(created.status, created.text).to.equal(201);
    // A Service (without a webhook: nothing to deliver) so that devices can register.
    const service = await api.post(`/adminApi/accounts/${created.body.data.id}/services`, {
      token: login.body.data.token,
      json: { name: 'Bot' },
    });
    expect(service.status, service.text).to.equal(201);
    account = created.body.data;
    return account;
  };
  const socketOn = async (index: number, widget: Widget) => {
    const socket = new WidgetSocket(widget, { baseUrl: nodes[index]!.url });
    sockets.push(socket);
    await socket.connected();
    return socket;
  };
  /**
   * One customer on two devices: `sender` calls REST on one node, the other device's socket
   * watches the conversation from another node (a device is not pushed its own messages).
   */
  const customer = async (account: AccountData, identity: string, senderNode: number, watcherNode: number) => {
    const sender = new Widget(account, undefined, undefined, '', nodes[senderNode]!.url).signIn(identity);
    const registered = await sender.register();
    expect(registered.status, registered.text).to.equal(200);
    const other = new Widget(account, undefined, undefined, '', nodes[watcherNode]!.url).signIn(identity);
    expect((await other.register()).status).to.equal(200);
    return { sender, watcher: await socketOn(watcherNode, other) };
  };
  /** Waits until the socket got every one of `texts`, then checks it got none twice. */
  const expectReached = async (socket: WidgetSocket, texts: string[], timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    const got = () => new Set(socket.messages().map((m) => m.message as string));
    while (texts.some((t) => !got().has(t))) {
      if (Date.now() > deadline) {
        const missing = texts.filter((t) => !got().has(t));
        throw new Error(`${missing.length} of ${texts.length} messages never reached the socket: ${missing.slice(0, 10).join(', ')}`);
      }
      await sleep(50);
    }
    const ids = socket.messages().map((m) => m.id);
    expect(new Set(ids).size, 'no message pushed twice').to.equal(ids.length);
  };

  it('starts while Redis is down, serves REST, and connects when Redis comes up', async () => {
    nodes.push(await startProcess(env));
    const api = client(nodes[0]!.url);
    expect((await api.get('/healthz')).status).to.equal(200);
    const ready = await waitForRedisCheck(0, 'degraded', 5000);
    expect(ready.body.data.status).to.equal('ready');

    // REST writes: an admin login and an account (login limiter), a device and a message (write limiter).
    const account = await ensureAccount();
    const onA = new Widget(account, undefined, undefined, '', nodes[0]!.url);
    expect((await onA.register()).status).to.equal(200);
    const first = await onA.send('written while Redis was never up');
    expect(first.status, first.text).to.equal(200);

    await redis.start();
    redisUp = true;
    await waitForRedisCheck(0, 'ok');
    nodes.push(await startProcess(env));
    await waitForRedisCheck(1, 'ok');

    // Node A → a socket on node B (A's publisher connected late), and node B → a socket on node
    // A (A's subscriber subscribed late).
    const fromA = await customer(account, 'customer-on-a', 0, 1);
    const fromB = await customer(account, 'customer-on-b', 1, 0);
    expect((await fromA.sender.send('from node A')).status).to.equal(200);
    expect((await fromB.sender.send('from node B')).status).to.equal(200);
    await fromA.watcher.expectExactly({ message: 1 });
    await fromB.watcher.expectExactly({ message: 1 });
    expect(fromA.watcher.messages()[0]).to.deep.include({ message: 'from node A' });
    expect(fromB.watcher.messages()[0]).to.deep.include({ message: 'from node B' });
  });

  it('under load, a Redis killed and restarted loses, repeats and stops nothing', async () => {
    // On its own too (if the test above failed): Redis up, two nodes.
    if (!redisUp) await redis.start();
    redisUp = true;
    while (nodes.length < 2) nodes.push(await startProcess(env));
    const account = await ensureAccount();
    for (const index of [0, 1]) await waitForRedisCheck(index, 'ok');

    const DEVICES = 6;
    const MAX_PER_DEVICE = 150;
    const widgets: Widget[] = [];
    const watchers: WidgetSocket[] = [];
    for (let i = 0; i < DEVICES; i++) {
      // Each sender's conversation is watched from the other node.
      const { sender, watcher } = await customer(account, `customer-under-load-${i}`, i % 2, (i + 1) % 2);
      widgets.push(sender);
      watchers.push(watcher);
    }
    const socketIds = watchers.map((w) => w.socket.id);

    let phase: 'before' | 'outage' | 'after' = 'before';
    const stats = {
      sent: 0,
      acknowledged: 0,
      refused: 0,
      failed: 0,
      byPhase: { before: 0, outage: 0, after: 0 },
      failures: [] as string[],
    };
    const acknowledged: string[][] = widgets.map(() => []);
    let stop = false;
    const load = async (index: number) => {
      for (let n = 0; n < MAX_PER_DEVICE && !stop; n++) {
        const text = `outage-${index}-${n}`;
        stats.sent++;
        try {
          const answer = await widgets[index]!.send(text);
          if (answer.status === 200) {
            stats.acknowledged++;
            stats.byPhase[phase]++;
            acknowledged[index]!.push(text);
          } else if (answer.status === 429) {
            stats.refused++;
          } else {
            stats.failed++;
            stats.failures.push(`${text}: ${answer.status} ${answer.text.slice(0, 200)}`);
          }
        } catch (err) {
          stats.failed++;
          stats.failures.push(`${text}: ${(err as Error).message}`);
        }
        await sleep(100);
      }
    };
    const loads = widgets.map((_, i) => load(i));

    await sleep(1500);
    await redis.stop(); // SIGKILL
    redisUp = false;
    phase = 'outage';
    await sleep(1000);
    // Both nodes notice, and keep reporting ready.
    await waitForRedisCheck(0, 'degraded', 10_000);
    await waitForRedisCheck(1, 'degraded', 10_000);
    await sleep(4000);
    expectNodesRunning();
    const duringOutage = stats.byPhase.outage;

    await redis.start();
    redisUp = true;
    phase = 'after';
    await waitForRedisCheck(0, 'ok');
    await waitForRedisCheck(1, 'ok');
    await sleep(2000);
    stop = true;
    await Promise.all(loads);
    expectNodesRunning();

    const connection = new pg.Client({ connectionString: database.databaseUrl });
    await connection.connect();
    let stored: Map<string, number>;
    try {
      const rows = (
        await connection.query<{ message: string; n: number }>(
          "select message, count(*)::int as n from messages where message like 'outage-%' group by message",
        )
      ).rows;
      stored = new Map(rows.map((r) => [r.message, r.n]));
    } finally {
      await connection.end();
    }
    const fallbacks = await Promise.all(
      nodes.map(async (node) => {
        const text = (await client(node.url).get('/metrics')).text;
        return [...text.matchAll(/^palaver_redis_fallbacks_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
      }),
    );
    process.stdout.write(
      `      messages: sent ${stats.sent}, acknowledged ${stats.acknowledged} (before ${stats.byPhase.before}, ` +
        `during the outage ${stats.byPhase.outage}, after ${stats.byPhase.after}), refused 429 ${stats.refused}, ` +
        `failed ${stats.failed}; stored ${[...stored.values()].reduce((a, b) => a + b, 0)} rows for ${stored.size} texts; ` +
        `rate-limit fallbacks to memory per node: ${fallbacks.join(', ')}\n`,
    );

    expect(stats.failures, 'every request answered').to.deep.equal([]);
    expect(duringOutage, 'writes acknowledged during the outage').to.be.greaterThan(DEVICES);
    expect(stats.byPhase.after, 'writes acknowledged after Redis returned').to.be.greaterThan(0);
    for (const [text, n] of stored) expect(n, `${text} stored once`).to.equal(1);
    for (const texts of acknowledged) for (const text of texts) expect(stored.get(text), `${text} stored`).to.equal(1);
    // Rate limits answered from memory while Redis was away, on both nodes.
    for (const [i, n] of fallbacks.entries()) expect(n, `node ${i} fell back to memory`).to.be.greaterThan(0);

    // Every acknowledged message reached its conversation's socket on the other node, once,
    // on the connection it had all along.
    for (const [i, watcher] of watchers.entries()) await expectReached(watcher, acknowledged[i]!);
    expect(
      watchers.map((w) => w.socket.id),
      'no socket reconnected',
    ).to.deep.equal(socketIds);
    for (const watcher of watchers) expect(watcher.socket.connected).to.equal(true);
  });
});
