// The dashboard's /operators sockets last no longer than what let them in: signing out, the
// session's expiry, disabling the operator and taking conversations:read away end them (an
// `ended` event with the code a request would get, then a server disconnect), and grants left
// on fewer accounts keep the socket in those accounts' rooms only. On several nodes (PostgreSQL
// and Redis), a change made through one node ends the operator's socket on another.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { io, type Socket } from 'socket.io-client';
import { createTestDatabase, mode, type TestDatabase } from './support/database.ts';
import { adminToken } from './support/factories.ts';
import { client } from './support/http.ts';
import { startProcess, type ServerProcess } from './support/process.ts';
import { sharedServer, startTestServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

type Grant = { accountId: number | null; permission: string };

interface ConversationChange {
  accountId: number;
  userId: number;
  change: string;
}

/** A dashboard's socket on /operators: what it heard, and how it ended. */
class OperatorSocket {
  readonly heard: ConversationChange[] = [];
  readonly ended: Array<{ code: string }> = [];
  readonly socket: Socket;
  private reason: string | null = null;

  constructor(baseUrl: string, token: string) {
    this.socket = io(`${baseUrl}/operators`, { path: '/socket.io', transports: ['websocket'], reconnection: false, auth: { token } });
    this.socket.on('conversation', (change: ConversationChange) => this.heard.push(change));
    this.socket.on('ended', (why: { code: string }) => this.ended.push(why));
    this.socket.on('disconnect', (reason) => (this.reason = reason));
  }

  connected(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve());
      this.socket.once('connect_error', reject);
    });
  }

  /** Resolves with the `ended` code once the server disconnected the socket. */
  async endedBy(timeoutMs = 10_000): Promise<string | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.reason === null) {
      if (Date.now() > deadline) throw new Error('the socket was not ended');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(this.reason).to.equal('io server disconnect');
    return this.ended[0]?.code;
  }

  async hears(accountId: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.heard.some((c) => c.accountId === accountId)) {
      if (Date.now() > deadline) throw new Error(`nothing heard of account ${accountId}: ${JSON.stringify(this.heard)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): void {
    this.socket.close();
  }
}

/** An operator with these grants, signed in through `baseUrl`: their id and token. */
async function operator(baseUrl: string, admin: string, grants: Grant[]): Promise<{ id: number; token: string }> {
  const api = client(baseUrl);
  const email = `live-${randomBytes(6).toString('hex')}@palaver.test`;
  const created = await api.post<{ id: number }>('/adminApi/operators', {
    token: admin,
    json: { email, password: 'live password', grants },
  });
  expect(created.status, created.text).to.equal(201);
  const login = await api.post<{ token: string }>('/adminApi/login', { json: { email, password: 'live password' } });
  expect(login.status, login.text).to.equal(200);
  return { id: created.body.data.id, token: login.body.data.token };
}

describe('/operators sockets end with what let them in', function () {
  this.timeout(60_000);
  const url = () => sharedServer().url;
  const api = () => client(url());
  const sockets: OperatorSocket[] = [];
  const tenants: Tenant[] = [];
  let mine: Tenant;

  const open = async (token: string, baseUrl = url()) => {
    const socket = new OperatorSocket(baseUrl, token);
    sockets.push(socket);
    await socket.connected();
    return socket;
  };
  const reader = async (accountIds: number[] = [mine.account.id]) =>
    operator(
      url(),
      await adminToken(),
      accountIds.map((accountId) => ({ accountId, permission: 'conversations:read' })),
    );

  beforeEach(async () => {
    mine = await tenant();
    tenants.push(mine);
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await Promise.all(tenants.splice(0).map((t) => t.receiver.close()));
  });

  it('ends at sign-out', async () => {
    const { token } = await reader();
    const socket = await open(token);
    expect((await api().delete('/adminApi/session', { token })).status).to.equal(200);
    expect(await socket.endedBy()).to.equal('invalid_token');
  });

  it('ends when the operator is disabled', async () => {
    const { id, token } = await reader();
    const socket = await open(token);
    const disabled = await api().put(`/adminApi/operators/${id}/disabled`, { token: await adminToken(), json: { disabled: true } });
    expect(disabled.status, disabled.text).to.equal(200);
    expect(await socket.endedBy()).to.equal('invalid_token');
  });

  it('ends when conversations:read is taken away', async () => {
    const { id, token } = await reader();
    const socket = await open(token);
    const grants = [{ accountId: mine.account.id, permission: 'accounts:read' }];
    expect((await api().put(`/adminApi/operators/${id}/grants`, { token: await adminToken(), json: { grants } })).status).to.equal(200);
    expect(await socket.endedBy()).to.equal('permission_denied');
    // The token itself still serves what the grants allow.
    expect((await api().get(`/adminApi/accounts/${mine.account.id}`, { token })).status).to.equal(200);
  });

  it('hears only the accounts left when conversations:read is kept on fewer', async () => {
    const other = await tenant();
    tenants.push(other);
    const { id, token } = await reader([mine.account.id, other.account.id]);
    const socket = await open(token);
    const grants = [{ accountId: other.account.id, permission: 'conversations:read' }];
    expect((await api().put(`/adminApi/operators/${id}/grants`, { token: await adminToken(), json: { grants } })).status).to.equal(200);
    // The socket is checked again after the commit (a read of the session): give it a moment.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const lost = new Widget(mine.account);
    await lost.register();
    await lost.send('not for this operator any more');
    const kept = new Widget(other.account);
    await kept.register();
    await kept.send('still theirs');
    await socket.hears(other.account.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(socket.heard.filter((c) => c.accountId === mine.account.id)).to.deep.equal([]);
    expect(socket.socket.connected).to.equal(true);
  });

  it('ends when its session expires', async () => {
    const server = await startTestServer({ admin: { sessionTtlSeconds: 2 } });
    try {
      const account = (
        await client(server.url).post<{ id: number }>('/adminApi/accounts', {
          token: await adminToken(server.url),
          json: { name: 'Short sessions' },
        })
      ).body.data;
      const { token } = await operator(server.url, await adminToken(server.url), [
        { accountId: account.id, permission: 'conversations:read' },
      ]);
      const socket = await open(token, server.url);
      const started = Date.now();
      expect(await socket.endedBy(5000)).to.equal('invalid_token');
      expect(Date.now() - started).to.be.at.most(2500);
    } finally {
      for (const socket of sockets.splice(0)) socket.close();
      await server.stop();
    }
  });
});

// Two server processes on one PostgreSQL and one Redis (TEST_REDIS_URL): the layout of
// test/realtime-nodes.test.ts. Skipped, with the reason in its title, without them.
const NEEDS = 'needs TEST_DATABASE_URL and TEST_REDIS_URL (PostgreSQL and Redis)';
const runs = mode === 'postgresql' && Boolean(process.env.TEST_REDIS_URL);

(runs ? describe : describe.skip)(`/operators sockets on two nodes${runs ? '' : ` (skipped: ${NEEDS})`}`, function () {
  this.timeout(120_000);
  const ADMIN = { email: 'operator-nodes@palaver.test', password: 'operator nodes password' };
  let database: TestDatabase | undefined;
  // Filled as each starts: a start that fails leaves the ones before it to be stopped.
  const nodes: ServerProcess[] = [];
  let admin: string;
  let accountId: number;
  const sockets: OperatorSocket[] = [];

  before(async () => {
    database = await createTestDatabase('operator-nodes');
    const env = {
      DATABASE_URL: database.databaseUrl,
      PALAVER_DATA_DIR: database.dataDir,
      REDIS_URL: process.env.TEST_REDIS_URL,
      PALAVER_ADMIN_EMAIL: ADMIN.email,
      PALAVER_ADMIN_PASSWORD: ADMIN.password,
    };
    nodes.push(await startProcess(env));
    nodes.push(await startProcess(env));
    const api = client(nodes[0]!.url);
    admin = (await api.post<{ token: string }>('/adminApi/login', { json: ADMIN })).body.data.token;
    accountId = (await api.post<{ id: number }>('/adminApi/accounts', { token: admin, json: { name: 'Nodes' } })).body.data.id;
  });
  after(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await Promise.all(nodes.splice(0).map((n) => n.stop('SIGTERM')));
    await database?.drop();
  });

  const openOn = async (node: ServerProcess, token: string) => {
    const socket = new OperatorSocket(node.url, token);
    sockets.push(socket);
    await socket.connected();
    return socket;
  };

  it('ends a socket on one node when the operator signs out through another', async () => {
    const { token } = await operator(nodes[0]!.url, admin, [{ accountId, permission: 'conversations:read' }]);
    const socket = await openOn(nodes[1]!, token);
    expect((await client(nodes[0]!.url).delete('/adminApi/session', { token })).status).to.equal(200);
    expect(await socket.endedBy()).to.equal('invalid_token');
  });

  it('ends the sockets on both nodes when conversations:read is taken away through one', async () => {
    const { id, token } = await operator(nodes[0]!.url, admin, [{ accountId, permission: 'conversations:read' }]);
    const onFirst = await openOn(nodes[0]!, token);
    const onSecond = await openOn(nodes[1]!, token);
    const answer = await client(nodes[0]!.url).put(`/adminApi/operators/${id}/grants`, { token: admin, json: { grants: [] } });
    expect(answer.status, answer.text).to.equal(200);
    expect(await onFirst.endedBy()).to.equal('permission_denied');
    expect(await onSecond.endedBy()).to.equal('permission_denied');
  });
});
