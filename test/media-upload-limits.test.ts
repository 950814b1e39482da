// Uploads under quotas per conversation and per device over a window of time (so that one
// visitor cannot fill the account's storage for everyone), judged before the body is read and
// streamed to a temporary file that never outlives the request; the name a file is downloaded
// under follows its type; and an upload into a busy conversation never waits for it long.
import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import type { AccountData } from './support/factories.ts';
import { PDF, PNG } from './support/files.ts';
import { client } from './support/http.ts';
import { TEST_ADMIN, sharedServer, startTestServer, type TestServer } from './support/server.ts';
import { Widget } from './support/widget.ts';

interface Refusal {
  status: number;
  retryAfter: string | null;
  body: { data: { media: string } | null; notifications: Array<{ message: string; detail?: string }> };
}

async function freshAccount(server: TestServer): Promise<AccountData & { apiKey: string }> {
  const api = client(server.url);
  const token = (await api.post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN })).body.data.token;
  const account = (await api.post<AccountData>('/adminApi/accounts', { token, json: { name: 'Uploads' } })).body.data;
  const service = (await api.post<{ id: number }>(`/adminApi/accounts/${account.id}/services`, { token, json: { name: 'S' } })).body.data;
  const key = (await api.post<{ apiKey: string }>(`/adminApi/services/${service.id}/keys`, { token, json: {} })).body.data;
  return { ...account, defaultServiceId: null, apiKey: key.apiKey };
}

async function newWidget(server: TestServer, account: AccountData): Promise<Widget & { userId: number }> {
  const widget = new Widget(account, undefined, undefined, '', server.url);
  const registered = await widget.register();
  expect(registered.status).to.equal(200);
  return Object.assign(widget, { userId: registered.body.data.userId });
}

async function upload(widget: Widget, bytes: Buffer, name = 'photo.png', type = 'image/png'): Promise<Refusal> {
  const form = new FormData();
  form.append('media', new Blob([bytes], { type }), name);
  const response = await fetch(`${widget.baseUrl}/media`, { method: 'POST', headers: widget.headers(), body: form });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Refusal['body'] };
}

async function serviceUpload(server: TestServer, apiKey: string, userId: number, bytes: Buffer, name = 'photo.png', type = 'image/png') {
  const form = new FormData();
  form.append('media', new Blob([bytes], { type }), name);
  const response = await fetch(`${server.url}/serviceApi/v2.3/users/${userId}/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}` },
    body: form,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: (await response.json()) as Refusal['body'] };
}

/** Entries left in the folder of uploads being received (none once every request is answered). */
function leftInUploads(server: TestServer): string[] {
  const dir = path.join(server.config.dataDir, 'uploads');
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String) : [];
}

/**
 * Sends the head of an upload declaring `declared` bytes and only `sent` of them, then waits
 * for an answer without sending the rest: the answer a server gives before reading the body.
 */
function answerBeforeBody(server: TestServer, requestPath: string, headers: Record<string, string>, declared: number, sent = 1024) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 3 s while ${declared - sent} bytes of the body were still to come`));
    }, 3000);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n') && text.includes('"status"')) {
        clearTimeout(timer);
        socket.destroy();
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
      }
    });
    socket.on('error', (err) => (clearTimeout(timer), reject(err)));
    const head = Object.entries({ ...headers, 'content-type': 'multipart/form-data; boundary=xyz', 'content-length': String(declared) })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const start = `--xyz\r\nContent-Disposition: form-data; name="media"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`;
    socket.write(`POST ${requestPath} HTTP/1.1\r\nHost: test\r\n${head}\r\n${start}`);
    socket.write(Buffer.concat([PNG, Buffer.alloc(Math.max(0, sent - start.length - PNG.length))]));
  });
}

describe('uploads: quotas per conversation and device, bodies never held in memory', function () {
  this.timeout(60_000);

  describe('window quotas', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({
        media: { deviceQuotaBytes: PNG.length * 2 + 10, conversationQuotaBytes: 1_000_000, quotaWindowSeconds: 3600 },
      });
    });
    after(() => server.stop());

    it('refuses a device past its quota with 429 device_upload_quota_exceeded and when it frees up; other visitors and the Service still upload', async () => {
      const account = await freshAccount(server);
      const noisy = await newWidget(server, account);
      expect((await upload(noisy, PNG)).status).to.equal(200);
      expect((await upload(noisy, PNG)).status).to.equal(200);
      const refused = await upload(noisy, PNG);
      expect(refused.status).to.equal(429);
      expect(refused.body.notifications[0]?.message).to.equal('device_upload_quota_exceeded');
      expect(refused.body.notifications[0]?.detail).to.match(/per device per 3600 s.*frees up in \d+ s/);
      // The oldest upload leaves the window an hour after it was made.
      expect(Number(refused.retryAfter)).to.be.within(3500, 3600);

      const quiet = await newWidget(server, account);
      expect((await upload(quiet, PNG)).status, 'another visitor').to.equal(200);
      expect((await serviceUpload(server, account.apiKey, noisy.userId, PNG)).status, 'the Service, into that conversation').to.equal(201);
      expect(leftInUploads(server)).to.deep.equal([]);
    });

    it('refuses a device past its quota before reading the body, and keeps no temporary file', async () => {
      const account = await freshAccount(server);
      const widget = await newWidget(server, account);
      expect((await upload(widget, PNG)).status).to.equal(200);
      expect((await upload(widget, PNG)).status).to.equal(200);
      const answer = await answerBeforeBody(server, '/media', widget.headers(), 100 * 1024);
      expect(answer.status).to.equal(429);
      expect(answer.text).to.match(/retry-after: \d+/i);
      expect(answer.text).to.include('device_upload_quota_exceeded');
      expect(leftInUploads(server)).to.deep.equal([]);
    });
  });

  it('counts the visitors of a conversation together (429 conversation_upload_quota_exceeded), and frees up as the window passes', async () => {
    const server = await startTestServer({
      media: { conversationQuotaBytes: PNG.length * 2 + 10, deviceQuotaBytes: 1_000_000, quotaWindowSeconds: 2 },
    });
    try {
      const account = await freshAccount(server);
      const widget = await newWidget(server, account);
      expect((await upload(widget, PNG)).status).to.equal(200);
      expect((await upload(widget, PNG)).status).to.equal(200);
      const refused = await upload(widget, PNG);
      expect(refused.status).to.equal(429);
      expect(refused.body.notifications[0]?.message).to.equal('conversation_upload_quota_exceeded');
      const wait = Number(refused.retryAfter);
      expect(wait).to.be.within(1, 2);
      await new Promise((r) => setTimeout(r, wait * 1000 + 100));
      expect((await upload(widget, PNG)).status, 'after Retry-After').to.equal(200);
    } finally {
      await server.stop();
    }
  });

  it('refuses an upload into an account over its storage quota before the client has sent the body', async () => {
    const server = await startTestServer({ media: { storageQuotaBytes: PNG.length + 10 } });
    try {
      const account = await freshAccount(server);
      const widget = await newWidget(server, account);
      expect((await upload(widget, PNG)).status).to.equal(200);
      // 100 KiB declared (under every cap), 1 KiB sent: answered without waiting for the other 99.
      const answer = await answerBeforeBody(server, '/media', widget.headers(), 100 * 1024);
      expect(answer.status).to.equal(413);
      expect(answer.text).to.include('storage_quota_exceeded');
      expect(answer.text).to.match(/connection: close/i);
      const fromService = await answerBeforeBody(
        server,
        `/serviceApi/v2.3/users/${widget.userId}/media`,
        { authorization: `Bearer ${account.apiKey}` },
        100 * 1024,
      );
      expect(fromService.status).to.equal(413);
      expect(leftInUploads(server)).to.deep.equal([]);
    } finally {
      await server.stop();
    }
  });

  it('caps a file while it streams (no declared length) and leaves no temporary file after any refusal', async () => {
    const server = await startTestServer();
    try {
      const account = await freshAccount(server);
      const widget = await newWidget(server, account);
      // Chunked: the length is known only as the bytes come. config/test.json caps documents at 128 KiB.
      const form = new FormData();
      form.append('media', new Blob([PDF, Buffer.alloc(3 * 1024 * 1024, 0x20)], { type: 'application/pdf' }), 'big.pdf');
      const encoded = new Response(form);
      const response = await fetch(`${widget.baseUrl}/media`, {
        method: 'POST',
        headers: { ...widget.headers(), 'content-type': encoded.headers.get('content-type')! },
        body: encoded.body,
        duplex: 'half',
      });
      expect(response.status).to.equal(413);
      expect(((await response.json()) as Refusal['body']).notifications[0]?.message).to.equal('media_too_large');

      expect((await upload(widget, Buffer.from('#!/bin/sh\n'), 'x.png')).status).to.equal(415);
      const empty = new FormData();
      empty.append('other', 'value');
      expect((await fetch(`${widget.baseUrl}/media`, { method: 'POST', headers: widget.headers(), body: empty })).status).to.equal(422);
      expect((await upload(widget, PNG)).status).to.equal(200);
      expect(leftInUploads(server)).to.deep.equal([]);
    } finally {
      await server.stop();
    }
  });

  it('names a download after the type its bytes were kept as', async () => {
    // Any server does: the test's own account, its own uploads.
    const server = sharedServer();
    const account = await freshAccount(server);
    const widget = await newWidget(server, account);
    for (const [name, expected] of [
      ['statement.html', 'statement.pdf'],
      ['invoice.hta.', 'invoice.pdf'],
      ['report', 'report.pdf'],
      ['contract.PDF', 'contract.PDF'],
    ]) {
      const uploaded = await upload(widget, PDF, name, 'text/html');
      expect(uploaded.status, name).to.equal(200);
      const [row] = await server.deps.db.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ path: string; description: string }>>('select path, description from media where id = ?', [
          uploaded.body.data!.media,
        ]);
      expect(row?.description, `${name} stored as`).to.equal(expected);
      const file = await fetch(`${widget.baseUrl}/media/${row!.path}`, { headers: widget.headers() });
      expect(file.status).to.equal(200);
      expect(file.headers.get('content-type')).to.equal('application/pdf');
      expect(file.headers.get('content-disposition'), `${name} served as`).to.equal(`attachment; filename="${expected}"`);
    }
  });

  describe('a busy conversation (PostgreSQL: the embedded database has one connection, so nothing waits on a row lock)', () => {
    it('refuses what it can before any lock, and never keeps an upload waiting for the conversation', async function () {
      if (!process.env.TEST_DATABASE_URL) this.skip();
      const server = await startTestServer();
      const holder = new pg.Client({ connectionString: server.config.databaseUrl });
      try {
        const account = await freshAccount(server);
        const widget = await newWidget(server, account);
        const userId = widget.userId;
        // Another transaction holds the conversation's row lock, as a long writer or a login merge would.
        await holder.connect();
        await holder.query('begin');
        await holder.query('select id from users where id = $1 for update', [userId]);
        const timed = async <T>(work: () => Promise<T>) => {
          const started = Date.now();
          const result = await work();
          return { result, ms: Date.now() - started };
        };
        const [text, json, png] = await Promise.all([
          timed(() => serviceUpload(server, account.apiKey, userId, Buffer.from('hello'), 'a.png')),
          timed(() =>
            fetch(`${server.url}/serviceApi/v2.3/users/${userId}/media`, {
              method: 'POST',
              headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
              body: '{"media":1}',
              signal: AbortSignal.timeout(10_000),
            }).then((r) => r.status),
          ),
          timed(() => serviceUpload(server, account.apiKey, userId, PNG)),
        ]);
        expect(text.result.status).to.equal(415);
        expect(text.ms, 'a text file named .png').to.be.below(1000);
        expect(json.result).to.equal(415);
        expect(json.ms, 'a JSON body').to.be.below(1000);
        expect(png.result.status, 'a valid PNG').to.equal(503);
        expect(png.result.body.notifications[0]?.message).to.equal('conversation_busy');
        expect(png.ms, 'a valid PNG').to.be.below(2500);
        await holder.query('rollback');
        expect((await serviceUpload(server, account.apiKey, userId, PNG)).status, 'once the lock is gone').to.equal(201);
        const [{ count }] = (await holder.query<{ count: string }>('select count(*) from media where user_id = $1', [userId])).rows as [
          { count: string },
        ];
        expect(Number(count), 'the refused upload left no row').to.equal(1);
        expect(leftInUploads(server)).to.deep.equal([]);
      } finally {
        await holder.end();
        await server.stop();
      }
    });
  });

  it('sweeps unsent uploads within the hour by default, and takes the new limits from the environment', () => {
    const defaults = loadConfig({ env: { NODE_ENV: 'production' } }).media;
    expect(defaults.unreferencedTtlSeconds).to.be.at.most(3600);
    expect(defaults.deviceQuotaBytes).to.be.below(defaults.storageQuotaBytes / 4);
    expect(defaults.conversationQuotaBytes).to.be.below(defaults.storageQuotaBytes / 4);
    const fromEnv = loadConfig({
      env: {
        NODE_ENV: 'production',
        PALAVER_MEDIA_DEVICE_QUOTA_BYTES: '1000',
        PALAVER_MEDIA_CONVERSATION_QUOTA_BYTES: '2000',
        PALAVER_MEDIA_QUOTA_WINDOW_SECONDS: '60',
        PALAVER_MEDIA_UNSENT_TTL_SECONDS: '120',
        PALAVER_MEDIA_STORAGE_QUOTA_BYTES: '3000',
      },
    }).media;
    expect(fromEnv).to.include({
      deviceQuotaBytes: 1000,
      conversationQuotaBytes: 2000,
      quotaWindowSeconds: 60,
      unreferencedTtlSeconds: 120,
      storageQuotaBytes: 3000,
    });
    expect(() => loadConfig({ env: { NODE_ENV: 'production', PALAVER_MEDIA_UNSENT_TTL_SECONDS: '60' } })).to.throw(
      /PALAVER_MEDIA_UNSENT_TTL_SECONDS|unreferencedTtlSeconds/,
    );
  });
});
