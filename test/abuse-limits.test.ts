// Issue 13: client addresses are taken from X-Forwarded-For only as far as trusted proxies
// vouch for it; failed logins are limited per email and address, per address and (briefly) per email; Client API writes per address as
// well as per device; a storage quota per account; the sweeper of unsent uploads; sockets
// capped per address. Each test runs its own server with small limits, and uses fresh emails
// and addresses, as with Redis the counts outlive a server (and a run).
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { connect, type Socket } from 'node:net';
import { expect } from 'chai';
import { io } from 'socket.io-client';
import { WebSocket } from 'ws';
import { TrustedProxies } from '../src/addresses.ts';
import { createOperator } from '../src/tenancy/operators.ts';
import type { AccountData } from './support/factories.ts';
import { PNG } from './support/files.ts';
import { client } from './support/http.ts';
import { TEST_ADMIN, startTestServer, type TestServer } from './support/server.ts';
import { Widget } from './support/widget.ts';

/** An address no other test (or earlier run) has counted. */
const freshAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
const freshEmail = (what: string) => `${what}-${randomBytes(4).toString('hex')}@palaver.test`;

async function freshAccount(server: TestServer): Promise<AccountData> {
  const api = client(server.url);
  const token = (await api.post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN })).body.data.token;
  const account = (await api.post<AccountData>('/adminApi/accounts', { token, json: { name: 'Limits' } })).body.data;
  await api.post(`/adminApi/accounts/${account.id}/services`, { token, json: { name: 'S' } });
  return { ...account, defaultServiceId: null };
}

async function upload(widget: Widget, bytes: Buffer, headers: Record<string, string> = {}) {
  const form = new FormData();
  form.append('media', new Blob([bytes], { type: 'image/png' }), 'photo.png');
  const response = await fetch(`${widget.baseUrl}/media`, { method: 'POST', headers: widget.headers(headers), body: form });
  return {
    status: response.status,
    body: (await response.json()) as { data: { media: string } | null; notifications: Array<{ message: string }> },
  };
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

describe('client addresses and trusted proxies', function () {
  this.timeout(60_000);

  it('reads X-Forwarded-For from the right, only past trusted hops', () => {
    const none = new TrustedProxies([]);
    expect(none.clientAddress('127.0.0.1', '1.2.3.4')).to.equal('127.0.0.1');
    const local = new TrustedProxies(['127.0.0.1', '10.0.0.0/8', '::1']);
    expect(local.clientAddress('::ffff:127.0.0.1', '6.6.6.6, 5.5.5.5, 10.1.2.3')).to.equal('5.5.5.5');
    expect(local.clientAddress('::1', '2001:db8::7')).to.equal('2001:db8::7');
    expect(local.clientAddress('127.0.0.1', undefined)).to.equal('127.0.0.1');
    expect(local.clientAddress('127.0.0.1', 'not-an-address')).to.equal('127.0.0.1');
    expect(local.clientAddress('203.0.113.9', '5.5.5.5'), 'an untrusted peer is the client').to.equal('203.0.113.9');
  });

  it('limits 30 wrong passwords from one address whatever X-Forwarded-For says, and refuses the right one then', async () => {
    const server = await startTestServer({
      admin: { loginRateLimit: { points: 1000, durationSeconds: 900 }, loginAddressRateLimit: { points: 10, durationSeconds: 900 } },
    });
    try {
      const api = client(server.url);
      const operator = { email: freshEmail('victim'), password: 'the right password' };
      await createOperator(server.deps.db.orm.em.fork(), { ...operator, grants: [], hashCost: server.config.security.passwordHashCost });
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) {
        const answer = await api.post('/adminApi/login', {
          json: { email: operator.email, password: `guess ${i}` },
          headers: { 'x-forwarded-for': freshAddress() },
        });
        statuses.push(answer.status);
      }
      expect(statuses.filter((s) => s === 429).length, String(statuses)).to.be.at.least(20);
      expect(statuses.every((s) => s === 401 || s === 429)).to.equal(true);
      const right = await api.post('/adminApi/login', { json: operator, headers: { 'x-forwarded-for': freshAddress() } });
      expect(right.status).to.equal(429);
      expect(right.body.notifications[0]?.message).to.equal('too_many_requests');
    } finally {
      await server.stop();
    }
  });

  it('slows failed logins per email from any address for a short window, then lets the right password in', async () => {
    const server = await startTestServer({
      admin: { loginEmailRateLimit: { points: 3, durationSeconds: 2 } },
      trustedProxies: ['127.0.0.1'],
    });
    try {
      const api = client(server.url);
      const operator = { email: freshEmail('many-places'), password: 'the right password' };
      await createOperator(server.deps.db.orm.em.fork(), { ...operator, grants: [], hashCost: server.config.security.passwordHashCost });
      const answers = [];
      for (let i = 0; i < 5; i++) {
        const json = { email: operator.email, password: `try ${i}` };
        answers.push(await api.post('/adminApi/login', { json, headers: { 'x-forwarded-for': freshAddress() } }));
      }
      expect(answers.map((a) => a.status)).to.deep.equal([401, 401, 401, 429, 429]);
      const retryAfter = Number(answers[4]?.headers.get('retry-after'));
      expect(retryAfter).to.be.within(1, 2);
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
      const right = await api.post('/adminApi/login', { json: operator, headers: { 'x-forwarded-for': freshAddress() } });
      expect(right.status, right.text).to.equal(200);
    } finally {
      await server.stop();
    }
  });

  describe('with the default login limits', () => {
    let server: TestServer;
    const api = () => client(server.url);
    const login = (json: { email: string; password: string }, address: string) =>
      api().post('/adminApi/login', { json, headers: { 'x-forwarded-for': address } });

    before(async () => {
      // config/default.json's limits (the test configuration lifts them).
      server = await startTestServer({
        trustedProxies: ['127.0.0.1'],
        admin: {
          loginRateLimit: { points: 10, durationSeconds: 900 },
          loginAddressRateLimit: { points: 30, durationSeconds: 900 },
          loginEmailRateLimit: { points: 20, durationSeconds: 60 },
        },
      });
    });
    after(async () => {
      await server.stop();
    });

    it('never counts a successful sign-in: 35 in a row from one address all succeed', async () => {
      const operator = { email: freshEmail('walkthrough'), password: 'the right password' };
      await createOperator(server.deps.db.orm.em.fork(), { ...operator, grants: [], hashCost: server.config.security.passwordHashCost });
      const address = freshAddress();
      const statuses: number[] = [];
      for (let i = 0; i < 35; i++) statuses.push((await login(operator, address)).status);
      expect(statuses).to.deep.equal(Array<number>(35).fill(200));
    });

    it("limits one address's failures for one email, never the right password from another address", async () => {
      const operator = { email: freshEmail('victim'), password: 'the right password' };
      await createOperator(server.deps.db.orm.em.fork(), { ...operator, grants: [], hashCost: server.config.security.passwordHashCost });
      const attacker = freshAddress();
      const answers = [];
      for (let i = 0; i < 12; i++) answers.push(await login({ email: operator.email, password: `guess ${i}` }, attacker));
      expect(answers.map((a) => a.status)).to.deep.equal([...Array<number>(10).fill(401), 429, 429]);
      expect(Number(answers[11]?.headers.get('retry-after'))).to.be.within(800, 900);
      expect(answers[11]?.body.notifications[0]?.message).to.equal('too_many_requests');
      // The pair is limited, even for the right password (it would tell the guesser it is right).
      expect((await login(operator, attacker)).status).to.equal(429);
      const elsewhere = await login(operator, freshAddress());
      expect(elsewhere.status, elsewhere.text).to.equal(200);
    });

    it("starts a pair's count over at the right password", async () => {
      const operator = { email: freshEmail('typo'), password: 'the right password' };
      await createOperator(server.deps.db.orm.em.fork(), { ...operator, grants: [], hashCost: server.config.security.passwordHashCost });
      const address = freshAddress();
      const wrong = async () => (await login({ email: operator.email, password: 'typo' }, address)).status;
      const statuses: number[] = [];
      for (let i = 0; i < 9; i++) statuses.push(await wrong());
      statuses.push((await login(operator, address)).status);
      for (let i = 0; i < 9; i++) statuses.push(await wrong());
      expect(statuses).to.deep.equal([...Array<number>(9).fill(401), 200, ...Array<number>(9).fill(401)]);
    });
  });

  it('with trustedProxies = 127.0.0.1, counts the address behind it', async () => {
    const server = await startTestServer({
      trustedProxies: ['127.0.0.1'],
      admin: { loginRateLimit: { points: 1000, durationSeconds: 900 }, loginAddressRateLimit: { points: 3, durationSeconds: 900 } },
    });
    try {
      const api = client(server.url);
      const real = freshAddress();
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        // What the client wrote itself sits on the left; the proxy's entry is the rightmost.
        const answer = await api.post('/adminApi/login', {
          json: { email: freshEmail('guess'), password: 'wrong' },
          headers: { 'x-forwarded-for': `${freshAddress()}, ${real}` },
        });
        statuses.push(answer.status);
      }
      expect(statuses).to.deep.equal([401, 401, 401, 429, 429]);
      const other = await api.post('/adminApi/login', {
        json: { email: freshEmail('guess'), password: 'wrong' },
        headers: { 'x-forwarded-for': freshAddress() },
      });
      expect(other.status, 'another address behind the proxy is not limited').to.equal(401);
    } finally {
      await server.stop();
    }
  });
});

describe('quotas: writes per address, storage, unsent uploads, sockets', function () {
  this.timeout(60_000);

  it('limits ten fresh devices from one address in total, over REST and sockets', async () => {
    const server = await startTestServer({
      trustedProxies: ['127.0.0.1'],
      client: { addressRateLimit: { points: 5, durationSeconds: 60 } },
    });
    try {
      const account = await freshAccount(server);
      const address = freshAddress();
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const widget = new Widget(account, undefined, undefined, '', server.url);
        statuses.push((await widget.call('POST', '/devices', { json: {}, headers: { 'x-forwarded-for': address } })).status);
      }
      expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);

      const elsewhere = new Widget(account, undefined, undefined, '', server.url);
      expect((await elsewhere.call('POST', '/devices', { json: {}, headers: { 'x-forwarded-for': freshAddress() } })).status).to.equal(200);

      // A fresh device (registered from elsewhere) on a socket from the same address: its writes are refused too.
      const widget = new Widget(account, undefined, undefined, '', server.url);
      expect((await widget.call('POST', '/devices', { json: {}, headers: { 'x-forwarded-for': freshAddress() } })).status).to.equal(200);
      const socket = io(server.url, {
        path: '/socket.io',
        transports: ['websocket'],
        reconnection: false,
        extraHeaders: { 'x-forwarded-for': address },
        auth: { identification: `${account.identification}:${widget.deviceId}` },
      });
      try {
        await new Promise<void>((resolve, reject) => {
          socket.once('connect', () => resolve());
          socket.once('connect_error', reject);
        });
        const ack = (await socket.timeout(5000).emitWithAck('message', { message: 'hello' })) as {
          notifications: Array<{ message: string }>;
        };
        expect(ack.notifications[0]?.message).to.equal('too_many_requests');
      } finally {
        socket.disconnect();
      }
    } finally {
      await server.stop();
    }
  });

  it('refuses an upload past the account storage quota with 413 storage_quota_exceeded, storing nothing', async () => {
    const server = await startTestServer({ media: { storageQuotaBytes: PNG.length * 2 + 10 } });
    try {
      const account = await freshAccount(server);
      const widget = new Widget(account, undefined, undefined, '', server.url);
      expect((await widget.register()).status).to.equal(200);
      expect((await upload(widget, PNG)).status).to.equal(200);
      expect((await upload(widget, PNG)).status).to.equal(200);
      const refused = await upload(widget, PNG);
      expect(refused.status).to.equal(413);
      expect(refused.body.notifications[0]?.message).to.equal('storage_quota_exceeded');
      // Another device of the same account counts against the same quota.
      const other = new Widget(account, undefined, undefined, '', server.url);
      expect((await other.register()).status).to.equal(200);
      expect((await upload(other, PNG)).status).to.equal(413);

      const rows = await server.deps.db.orm.em.fork().getConnection().execute('select id from media where account_id = ?', [account.id]);
      expect(rows).to.have.length(2);
      expect(filesUnder(path.join(server.config.dataDir, 'media', String(account.id)))).to.have.length(2);
    } finally {
      await server.stop();
    }
  });

  it('sweeps an unsent upload past the setting (row and file), keeping those messages refer to', async () => {
    const server = await startTestServer({ media: { unreferencedTtlSeconds: 3600, sweepIntervalSeconds: 0.2 } });
    try {
      const account = await freshAccount(server);
      const widget = new Widget(account, undefined, undefined, '', server.url);
      const userId = (await widget.register()).body.data.userId;
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const uploaded = await upload(widget, PNG);
        expect(uploaded.status).to.equal(200);
        ids.push(uploaded.body.data!.media);
      }
      const [sent, inCarousel, unsent, young] = ids as [string, string, string, string];
      expect((await widget.send({ media: { id: sent } })).status).to.equal(200);
      const connection = server.deps.db.orm.em.fork().getConnection();
      const [carouselMedia] = await connection.execute<Array<{ path: string }>>('select path from media where id = ?', [inCarousel]);
      // An agent message whose carousel shows the upload (as the Service API writes it).
      const content = {
        title: null,
        buttons: [],
        quickReplies: [],
        carousel: [
          { message: 'A sofa', title: null, media: { path: carouselMedia!.path, mimeType: 'image/png', description: null }, buttons: [] },
        ],
      };
      await connection.execute('insert into messages (user_id, type_id, content) values (?, 2, ?::jsonb)', [
        userId,
        JSON.stringify(content),
      ]);
      const pathOf = async (id: string) =>
        (await connection.execute<Array<{ path: string }>>('select path from media where id = ?', [id]))[0]?.path;
      // Read before the uploads are aged: from then on the sweeper (every 0.2 s) may take it.
      const unsentPath = (await pathOf(unsent))!;
      const unsentFile = path.join(server.config.dataDir, 'media', String(account.id), unsentPath);
      expect(existsSync(unsentFile)).to.equal(true);
      await connection.execute(`update media set created_at = now() - interval '2 hours' where id = any(?::uuid[])`, [
        `{${[sent, inCarousel, unsent].join(',')}}`,
      ]);

      // The sweeper deletes the row, then (after its commit) the file: wait for both.
      const deadline = Date.now() + 10_000;
      while (((await pathOf(unsent)) !== undefined || existsSync(unsentFile)) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }

      expect(await pathOf(unsent), 'the unsent row is gone').to.equal(undefined);
      expect(existsSync(unsentFile), 'the unsent file is gone').to.equal(false);
      for (const kept of [sent, inCarousel, young]) {
        const keptPath = await pathOf(kept);
        expect(keptPath, `upload ${kept} kept`).to.be.a('string');
        expect(existsSync(path.join(server.config.dataDir, 'media', String(account.id), keptPath!))).to.equal(true);
      }
      expect(filesUnder(path.join(server.config.dataDir, 'media', String(account.id)))).to.have.length(3);
    } finally {
      await server.stop();
    }
  });

  it('caps sockets per address, refusing the handshake with 429 too_many_connections', async () => {
    const server = await startTestServer({ trustedProxies: ['127.0.0.1'], client: { maxSocketsPerAddress: 2 } });
    const sockets: Array<ReturnType<typeof io>> = [];
    try {
      const account = await freshAccount(server);
      const address = freshAddress();
      const open = async (from: string, { known = true } = {}) => {
        const widget = new Widget(account, undefined, undefined, '', server.url);
        if (known) expect((await widget.register()).status).to.equal(200);
        const socket = io(server.url, {
          path: '/socket.io',
          transports: ['websocket'],
          reconnection: false,
          extraHeaders: { 'x-forwarded-for': from },
          auth: { identification: `${account.identification}:${widget.deviceId}` },
        });
        sockets.push(socket);
        return new Promise<{ ok: true } | { ok: false; message: string; data: unknown }>((resolve) => {
          socket.once('connect', () => resolve({ ok: true }));
          socket.once('connect_error', (err: Error & { data?: unknown }) => resolve({ ok: false, message: err.message, data: err.data }));
        });
      };
      // Refused handshakes (an unregistered device) give their place back at once.
      for (let n = 0; n < 3; n++) {
        expect(await open(address, { known: false })).to.deep.equal({
          ok: false,
          message: 'device_not_found',
          data: { status: 404, code: 'device_not_found' },
        });
      }
      const first = sockets.length;
      expect(await open(address)).to.deep.equal({ ok: true });
      expect(await open(address)).to.deep.equal({ ok: true });
      expect(await open(address)).to.deep.equal({
        ok: false,
        message: 'too_many_connections',
        data: { status: 429, code: 'too_many_connections' },
      });
      expect(await open(freshAddress()), 'another address is not capped').to.deep.equal({ ok: true });
      sockets[first]!.disconnect();
      // The place is given back once the server sees the socket go.
      await until(
        () => placesHeld(server, address) === 1,
        () => `${placesHeld(server, address)} places held`,
      );
      expect(await open(address)).to.deep.equal({ ok: true });
    } finally {
      for (const socket of sockets) socket.disconnect();
      await server.stop();
    }
  });
});

/**
 * A raw Engine.IO connection over WebSocket (no socket.io-client, which never does this): it
 * sends the Socket.IO CONNECT packets it is told to and records the answers.
 */
async function rawEngineConnection(url: string, from: string) {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket`, {
    headers: { 'x-forwarded-for': from },
  });
  const packets: string[] = [];
  ws.on('message', (data: Buffer) => {
    const text = data.toString();
    if (text === '2') ws.send('3');
    else packets.push(text);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    packets,
    /** "40" + auth: a Socket.IO CONNECT of namespace "/". */
    connect: (auth: unknown) => ws.send(`40${JSON.stringify(auth)}`),
    /** "41": a Socket.IO DISCONNECT of namespace "/", the connection left open. */
    leave: () => ws.send('41'),
    close: () => new Promise<void>((resolve) => (ws.once('close', () => resolve()), ws.close())),
  };
}

describe('sockets per address, one Engine.IO connection at a time', function () {
  this.timeout(90_000);

  it('a connection sending CONNECT for / twice holds one place, and gives it back when closed', async () => {
    const server = await startTestServer({ trustedProxies: ['127.0.0.1'], client: { maxSocketsPerAddress: 2 } });
    const sockets: Array<ReturnType<typeof io>> = [];
    try {
      const account = await freshAccount(server);
      const address = freshAddress();
      const device = async () => {
        const widget = new Widget(account, undefined, undefined, '', server.url);
        expect((await widget.register()).status).to.equal(200);
        return { identification: `${account.identification}:${widget.deviceId}` };
      };
      for (let n = 0; n < 3; n++) {
        const raw = await rawEngineConnection(server.url, address);
        // Two at once (Socket.IO ignores a CONNECT for a namespace the connection already has a
        // socket of, but not one arriving while the first is still being authenticated).
        const [a, b, c] = await Promise.all([device(), device(), device()]);
        raw.connect(a);
        raw.connect(b);
        await until(
          () => raw.packets.filter((p) => p.startsWith('4')).length >= 2,
          () => raw.packets.join(' '),
        );
        const answers = raw.packets.filter((p) => p.startsWith('4'));
        expect(
          answers.filter((p) => p.startsWith('40{"sid"')),
          answers.join(' '),
        ).to.have.length(1);
        expect(
          answers.filter((p) => p.startsWith('44{"message":"too_many_connections"')),
          answers.join(' '),
        ).to.have.length(1);
        // Then the namespace left ("41") and joined again on the same connection.
        raw.leave();
        // Handled on a later tick: a CONNECT read before would be an invalid state (the
        // connection closed). The leave is handled once the socket's place is given back.
        await until(
          () => placesHeld(server, address) === 0,
          () => `${placesHeld(server, address)} places held after the leave`,
        );
        raw.connect(c);
        await until(
          () => raw.packets.filter((p) => p.startsWith('4')).length >= 3,
          () => raw.packets.join(' '),
        );
        expect(raw.packets.at(-1)).to.match(/^40\{"sid"/);
        await raw.close();
        // The server sees the connection close a moment after the client does.
        await until(
          () => placesHeld(server, address) === 0,
          () => `${placesHeld(server, address)} places held after the connection closed`,
        );
      }
      // Every place came back: the address opens the whole cap.
      const open = async () => {
        const socket = io(server.url, {
          path: '/socket.io',
          transports: ['websocket'],
          reconnection: false,
          extraHeaders: { 'x-forwarded-for': address },
          auth: await device(),
        });
        sockets.push(socket);
        return new Promise<string>((resolve) => {
          socket.once('connect', () => resolve('connected'));
          socket.once('connect_error', (err: Error) => resolve(err.message));
        });
      };
      expect(await open()).to.equal('connected');
      expect(await open()).to.equal('connected');
      expect(await open(), 'and no more').to.equal('too_many_connections');
    } finally {
      for (const socket of sockets) socket.disconnect();
      await server.stop();
    }
  });
});

/** The places the address holds on the server's node: the count its cap is checked against. */
function placesHeld(server: TestServer, address: string): number {
  return server.deps.realtime['perAddress'].get(address) ?? 0;
}

/** Waits for a condition on state that changes by itself; the deadline only bounds a failure. */
async function until(condition: () => boolean, what: () => string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out: ${what()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('open connections per address', function () {
  this.timeout(30_000);

  it('holds slow clients to the cap, and frees a place when one closes', async () => {
    const server = await startTestServer({ http: { maxConnectionsPerAddress: 3 } });
    const open: Socket[] = [];
    try {
      // Slow clients: a request line and no more.
      for (let i = 0; i < 3; i++) {
        const socket = connect(server.port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
        open.push(socket);
      }
      const fourth = connect(server.port, '127.0.0.1');
      const cut = await new Promise<boolean>((resolve) => {
        fourth.once('close', () => resolve(true));
        fourth.once('data', () => resolve(false));
        fourth.once('connect', () => fourth.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
      });
      expect(cut, 'the fourth connection is closed without an answer').to.equal(true);

      const first = open.shift();
      await new Promise((resolve) => {
        first?.once('close', resolve);
        first?.destroy();
      });
      const answer = await fetch(`${server.url}/healthz`, { headers: { connection: 'close' } });
      expect(answer.status).to.equal(200);
    } finally {
      for (const socket of open) socket.destroy();
      await server.stop();
    }
  });
});
