// Issue 37: past its bound of client writes in progress, a node refuses at once and explicitly
// (503 server_busy, with the wait to retry after) instead of queueing until callers time out;
// what it acknowledged is written, what it refused is not, and it admits again once the writes
// in progress are answered. The bound is tiny here so that a burst passes it.
import { expect } from 'chai';
import { io, type Socket } from 'socket.io-client';
import type { AccountData } from './support/factories.ts';
import { client } from './support/http.ts';
import { TEST_ADMIN, startTestServer, type TestServer } from './support/server.ts';
import { Widget } from './support/widget.ts';

interface AckEnvelope {
  data: { messageId?: string; retryAfter?: number } | null;
  notifications: Array<{ message: string }>;
}

async function freshAccount(server: TestServer): Promise<AccountData> {
  const api = client(server.url);
  const token = (await api.post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN })).body.data.token;
  const account = (await api.post<AccountData>('/adminApi/accounts', { token, json: { name: 'Busy' } })).body.data;
  await api.post(`/adminApi/accounts/${account.id}/services`, { token, json: { name: 'S' } });
  return { ...account, defaultServiceId: null };
}

async function stored(server: TestServer, userId: number): Promise<string[]> {
  const rows = await server.deps.db.orm.em
    .getConnection()
    .execute<Array<{ message: string }>>('select message from messages where user_id = ? and type_id = 1 order by id', [userId]);
  return rows.map((row) => row.message);
}

/** A new account's customer, registered, with its socket connected. */
async function customer(server: TestServer): Promise<{ widget: Widget; userId: number; socket: Socket }> {
  const account = await freshAccount(server);
  const widget = new Widget(account, undefined, undefined, '', server.url);
  const { userId } = (await widget.register()).body.data;
  const socket: Socket = io(server.url, {
    path: '/socket.io',
    transports: ['websocket'],
    reconnection: false,
    auth: { identification: `${account.identification}:${widget.deviceId}` },
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  return { widget, userId, socket };
}

describe('admission of client writes (server_busy)', function () {
  this.timeout(60_000);
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ client: { admission: { maxWritesInFlight: 1, retryAfterSeconds: 3 } } });
  });
  after(() => server.stop());

  it('refuses socket messages past the bound with server_busy and retryAfter; every acknowledged one is stored, no refused one', async () => {
    const { userId, socket } = await customer(server);
    try {
      // A burst in one turn of the event loop: the first is admitted, the others find the node full.
      const texts = Array.from({ length: 20 }, (_, i) => `burst ${i}`);
      const answers = await Promise.all(
        texts.map((message) => new Promise<AckEnvelope>((resolve) => socket.emit('message', { message }, resolve))),
      );
      const accepted = texts.filter((_, i) => answers[i]?.data?.messageId !== undefined);
      const refused = answers.filter((answer) => answer.notifications.some((n) => n.message === 'server_busy'));
      expect(accepted.length + refused.length, 'every send answered: stored or refused explicitly').to.equal(texts.length);
      expect(refused.length).to.be.greaterThan(0);
      for (const answer of refused) expect(answer.data).to.deep.equal({ retryAfter: 3 });
      expect(await stored(server, userId), 'exactly the acknowledged messages are stored').to.deep.equal(accepted);

      // Nothing in progress any more: the node admits again.
      const again = await new Promise<AckEnvelope>((resolve) => socket.emit('message', { message: 'after the burst' }, resolve));
      expect(again.data?.messageId).to.be.a('string');
    } finally {
      socket.disconnect();
    }
  });

  it('answers REST writes past the bound 503 server_busy with Retry-After', async () => {
    const account = await freshAccount(server);
    const widget = new Widget(account, undefined, undefined, '', server.url);
    const { userId } = (await widget.register()).body.data;
    const texts = Array.from({ length: 10 }, (_, i) => `rest ${i}`);
    const answers = await Promise.all(texts.map((text) => widget.send(text)));
    const accepted = texts.filter((_, i) => answers[i]?.status === 200);
    const refused = answers.filter((answer) => answer.status === 503);
    expect(accepted.length + refused.length).to.equal(texts.length);
    expect(refused.length).to.be.greaterThan(0);
    for (const answer of refused) {
      expect(answer.headers.get('retry-after')).to.equal('3');
      expect(answer.body.notifications.map((n) => n.message)).to.include('server_busy');
    }
    expect((await stored(server, userId)).sort()).to.deep.equal(accepted.sort());
    // Counted for the operators (the socket test's refusals before these).
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const counted = Number(/^palaver_client_writes_refused_total\{reason="writes_in_flight"\} (\d+)$/m.exec(metrics)?.[1]);
    expect(counted).to.be.at.least(refused.length);
    expect(metrics).to.match(/^palaver_client_writes_in_flight 0$/m);
    expect((await widget.send('after the burst')).status).to.equal(200);
  });
});

// Past its database's capacity a node refuses too: when work waits longer than
// maxDatabaseWaitMs for a connection (every pooled connection busy; the embedded database's
// one), client writes are refused at once, so that what the node accepts it can still deliver.
// The connections are held here by statements that sleep. (The suite's other servers run with a
// bound of ten minutes, config/test.json: their bursts on a loaded machine are not what they test.)
describe('admission of client writes while the database is saturated', function () {
  this.timeout(60_000);
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ client: { admission: { maxDatabaseWaitMs: 100, retryAfterSeconds: 3 } } });
  });
  after(() => server.stop());

  const until = async (condition: () => boolean, what: string) => {
    for (let waited = 0; !condition(); waited += 20) {
      if (waited > 20_000) throw new Error(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('refuses socket and REST writes with server_busy while work waits for a connection, and admits again after', async () => {
    const { widget, userId, socket } = await customer(server);
    try {
      const first = await new Promise<AckEnvelope>((resolve) => socket.emit('message', { message: 'before' }, resolve));
      expect(first.data?.messageId).to.be.a('string');

      // One sleeping statement more than the pool has connections (ten on PostgreSQL, one embedded): it waits.
      const connection = server.deps.db.orm.em.getConnection();
      const { max } = (connection.getKnex().client as { pool: { max: number } }).pool;
      const sleeping = Array.from({ length: max + 1 }, () => connection.execute('select pg_sleep(2)'));
      await until(() => server.deps.admission.databaseWaitMs > 100, 'a statement waited 100 ms for a connection');

      const refused = await new Promise<AckEnvelope>((resolve) => socket.emit('message', { message: 'while full' }, resolve));
      expect(refused.notifications.map((n) => n.message)).to.deep.equal(['server_busy']);
      expect(refused.data).to.deep.equal({ retryAfter: 3 });
      const rest = await widget.send('while full, over REST');
      expect(rest.status).to.equal(503);
      expect(rest.headers.get('retry-after')).to.equal('3');
      expect(rest.body.notifications.map((n) => n.message)).to.include('server_busy');

      await Promise.all(sleeping);
      // Once nothing waits (and the last second's mean has passed), the node admits again.
      await until(() => server.deps.admission.databaseWaitMs <= 100, 'the database wait fell back');
      const after = await new Promise<AckEnvelope>((resolve) => socket.emit('message', { message: 'after' }, resolve));
      expect(after.data?.messageId).to.be.a('string');

      expect(await stored(server, userId), 'the refused writes were not stored').to.deep.equal(['before', 'after']);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(Number(/^palaver_client_writes_refused_total\{reason="database_wait"\} (\d+)$/m.exec(metrics)?.[1])).to.equal(2);
    } finally {
      socket.disconnect();
    }
  });
});
