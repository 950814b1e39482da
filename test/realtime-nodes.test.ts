// Three Palaver server processes on one PostgreSQL and one Redis (the socket.io-redis-adapter
// test layout, with real processes): emits from any node reach sockets on every node, merges
// move sockets everywhere, and a Redis that goes away and comes back loses nothing once
// clients catch up.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { expect } from 'chai';
import { createTestDatabase, mode, type TestDatabase } from './support/database.ts';
import { client } from './support/http.ts';
import { startProcess, type ServerProcess } from './support/process.ts';
import { Receiver } from './support/receiver.ts';
import { WidgetSocket } from './support/sockets.ts';
import { Widget } from './support/widget.ts';

const ADMIN = { email: 'nodes@palaver.test', password: 'three nodes password' };

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A Redis of this test's own, so that it can be stopped and started. */
class TestRedis {
  private process: ChildProcess | undefined;
  constructor(readonly port: number) {}

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.process = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    for (let i = 0; i < 100; i++) {
      const up = await new Promise<boolean>((resolve) => {
        const probe = spawn('redis-cli', ['-p', String(this.port), 'ping'], { stdio: 'ignore' });
        probe.on('exit', (code) => resolve(code === 0));
      });
      if (up) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server did not start');
  }

  async stop(): Promise<void> {
    const proc = this.process;
    if (!proc || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  }
}

(mode === 'postgresql' ? describe : describe.skip)('real-time gateway on three nodes', function () {
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
    const env = {
      DATABASE_URL: database.databaseUrl,
      PALAVER_DATA_DIR: database.dataDir,
      REDIS_URL: redis.url,
      PALAVER_ADMIN_EMAIL: ADMIN.email,
      PALAVER_ADMIN_PASSWORD: ADMIN.password,
    };
    nodes = [];
    for (let i = 0; i < 3; i++) nodes.push(await startProcess(env));
    const api = client(nodes[0]!.url);
    const token = (await api.post<{ token: string }>('/adminApi/login', { json: ADMIN })).body.data.token;
    const created = (await api.post<typeof account>('/adminApi/accounts', { token, json: { name: 'Nodes' } })).body.data;
    const service = (await api.post<{ id: number; apiKey: string }>(`/adminApi/accounts/${created.id}/services`, {
      token,
      json: { name: 'Bot', webhookUrl: `${receiver.url}/hook` },
    })).body.data;
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
    const [message] = await onC.waitFor('message', 1);
    expect(message).to.deep.include({ id: sent.body.data.id, message: 'from node A' });
    const [agent] = await onC.waitFor('agent', 1);
    expect(agent).to.deep.include({ agent: { id: 1, name: 'Node agent', avatar: null, isTyping: null } });
  });

  it('a merge on node B moves the sockets on node A', async () => {
    const widget = new Widget(account, undefined, undefined, '', onNode(1));
    await widget.register();
    const onA = await socketOn(0, widget);
    widget.signIn('customer-on-three-nodes');
    const registeredId = (await widget.register()).body.data.userId;
    const [merged] = await onA.waitFor('merged', 1);
    expect(merged).to.deep.equal({ userId: registeredId });
    await agentSays(2, registeredId, 'to the registered user');
    const [message] = await onA.waitFor('message', 1);
    expect(message).to.deep.include({ message: 'to the registered user' });
  });

  it('loses nothing when Redis stops and starts again, once clients catch up', async () => {
    const widget = new Widget(account, undefined, undefined, '', onNode(2));
    const userId = (await widget.register()).body.data.userId;
    const onC = await socketOn(2, widget);
    const before = await agentSays(0, userId, 'before the outage');
    await onC.waitFor('message', 1);

    await redis.stop();
    const during: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const answer = await agentSays(0, userId, `during ${i}`);
      expect(answer.status, 'writes go on without Redis').to.equal(201);
      during.push(answer.body.data.id);
    }
    const ready = await client(onNode(0)).get<{ checks: Record<string, string> }>('/readyz');
    expect(ready.status, 'readiness reports the outage').to.equal(503);

    await redis.start();
    // A client that lost its connection comes back with the last message it has.
    await onC.reconnect();
    const after = await agentSays(1, userId, 'after the outage');
    await onC.waitFor('message', 7, 30_000);
    expect(onC.messages().map((m) => m.id)).to.deep.equal([before.body.data.id, ...during, after.body.data.id]);
    const history = await widget.messages();
    expect(history.body.data.map((m) => m.id).reverse()).to.deep.equal(onC.messages().map((m) => m.id));
  });
});
