// The one-file reference for `pipeline` and `capacity`: what Palaver's message round trip does,
// built bare from the same libraries (Koa, Socket.IO, pg, got) with the same durability, so that
// Palaver's figures have a same-work yardstick.
//   1. A customer's socket `message` is INSERTed in a transaction, acknowledged after COMMIT.
//   2. After the commit, its webhook goes to the Service: a POST through got, signed as Standard
//      Webhooks are (HMAC-SHA256 of id.timestamp.body), in Palaver's message payload's shape.
//   3. The Service answers through `POST /serviceApi/v2.3/users/:id/messages` with its API key
//      (Bearer): the answer is INSERTed in a transaction and the request answered after COMMIT.
//   4. The answer is emitted to the customer's sockets, in Palaver's client message shape.
// Customers register with `POST /devices` (x-iris-identification) and open their socket with
// `auth.identification`, as the widget does with Palaver. Nothing else: no outbox (a webhook
// that fails is counted, not retried), no limits, no tenancy.
// Usage: reference-pipeline.ts <database URL | embedded:<dir>> <webhook URL> <API key> <webhook secret>
// (the embedded database is PGlite behind its wire server in a worker thread, started as Palaver
// starts its own). Prints its port; on SIGTERM, the failed webhooks on stderr.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http, { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import got from 'got';
import Koa from 'koa';
import pg from 'pg';
import { Server, type Socket } from 'socket.io';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../src/db/embedded.ts';

const [database, webhookUrl, apiKey, secret] = process.argv.slice(2);
if (!database || !webhookUrl || !apiKey || !secret?.startsWith('whsec_')) {
  throw new Error('usage: reference-pipeline.ts <database URL | embedded:<dir>> <webhook URL> <API key> <whsec_ secret>');
}
const ACCOUNT = { id: 1, identification: 'reference' };
const AGENT = { id: 1, name: 'Reference bot' };

// PGlite is one session: one connection, as Palaver's embedded mode has.
let embedded: EmbeddedDatabase | undefined;
if (database.startsWith('embedded:')) embedded = await startEmbeddedDatabase(database.slice('embedded:'.length));
const pool = new pg.Pool({ connectionString: embedded?.url ?? database, max: embedded ? 1 : 10 });
await pool.query(`
  create table if not exists users (id bigserial primary key, identification text not null unique);
  create table if not exists messages (
    id bigserial primary key,
    user_id bigint not null references users,
    type_id smallint not null,
    body text not null,
    created_at timestamptz not null default now()
  )`);

interface Row {
  id: string;
  created_at: Date;
}

/** The message, committed: BEGIN, INSERT, COMMIT on one pooled connection. */
async function store(userId: number, typeId: number, body: string): Promise<Row> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query<Row>('insert into messages (user_id, type_id, body) values ($1, $2, $3) returning id, created_at', [
      userId,
      typeId,
      body,
    ]);
    await client.query('commit');
    return rows[0] as Row;
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

// Webhooks as Palaver's sender makes them: keep-alive connections, got's stream interface with
// the answer drained, no decompression. 16 connections, the reference's best: with 64 (Palaver's
// `webhooks.maxPerService`) as many Service calls come back at once and queue for its ten pooled
// connections, and it held 4,000 conversations where with 16 it held 6,000 and more (capacity,
// quiet machine, 26 November 2026): the ratio is taken against the reference at its best.
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const client = got.extend({
  agent: { http: agent },
  timeout: { request: 10_000 },
  followRedirect: false,
  retry: { limit: 0 },
  throwHttpErrors: false,
  decompress: false,
  headers: { 'user-agent': 'Reference-Webhooks/1', 'content-type': 'application/json' },
});
const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
let failedWebhooks = 0;

function sendWebhook(userId: number, row: Row, text: string): void {
  const body = JSON.stringify({
    type: 'message',
    id: Number(row.id),
    time: Math.floor(row.created_at.getTime() / 1000),
    message: text,
    typeId: 1,
    accountIdentification: ACCOUNT.identification,
    accountId: ACCOUNT.id,
    user: { id: String(userId), uniqueIdentifier: null, additionalInformation: null },
  });
  const id = `msg_${row.id}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  const stream = client.stream.post(webhookUrl as string, {
    body,
    headers: { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` },
  });
  stream.once('response', (response: { statusCode: number }) => {
    if (response.statusCode >= 300) failedWebhooks += 1;
  });
  stream.once('error', () => (failedWebhooks += 1));
  stream.resume();
}

const envelope = (data: unknown) => ({ data, notifications: [], status: 'SUCCESS' });

/** The customers' open sockets, by user id. */
const sockets = new Map<number, Set<Socket>>();

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
}

const expectedAuthorization = Buffer.from(`Bearer ${apiKey}`);
const authorized = (header: string | undefined) => {
  const given = Buffer.from(header ?? '');
  return given.length === expectedAuthorization.length && timingSafeEqual(given, expectedAuthorization);
};

const answerRoute = /^\/serviceApi\/v2\.3\/users\/(\d+)\/messages$/;

const app = new Koa();
// Requests still coming as the process stops fail on the closed pool: not worth a stack trace each.
app.silent = true;
app.use(async (ctx) => {
  const answer = ctx.method === 'POST' ? answerRoute.exec(ctx.path) : null;
  if (answer) {
    if (!authorized(ctx.get('authorization'))) {
      ctx.status = 401;
      return;
    }
    const userId = Number(answer[1]);
    const input = await readJson(ctx.req);
    const text = typeof input.message === 'string' ? input.message : '';
    const row = await store(userId, 2, text);
    ctx.status = 201;
    ctx.body = envelope({ id: Number(row.id) });
    const agent = (input.agent as { id?: number; name?: string } | undefined) ?? AGENT;
    const message = {
      id: Number(row.id),
      time: Math.floor(row.created_at.getTime() / 1000),
      message: text,
      image: null,
      typeId: 2,
      agent: { id: agent.id ?? AGENT.id, name: agent.name ?? AGENT.name, avatar: null, isTyping: null },
      carousel: [],
      quickReplies: [],
      custom: [],
      title: null,
      media: null,
      buttons: [],
      status: 'sent',
    };
    for (const socket of sockets.get(userId) ?? []) socket.emit('message', message);
    return;
  }
  if (ctx.method === 'POST' && ctx.path === '/devices') {
    const identification = ctx.get('x-iris-identification');
    await readJson(ctx.req);
    const { rows } = await pool.query<{ id: string }>(
      'insert into users (identification) values ($1) on conflict (identification) do update set identification = excluded.identification returning id',
      [identification],
    );
    ctx.body = envelope({ userId: Number(rows[0]?.id) });
    return;
  }
  ctx.status = 404;
});

const server = createServer(app.callback());
server.keepAliveTimeout = 60_000;
const io = new Server(server, { path: '/socket.io', serveClient: false });
io.use((socket, next) => {
  const identification = (socket.handshake.auth as { identification?: unknown }).identification;
  pool.query<{ id: string }>('select id from users where identification = $1', [String(identification)]).then(
    ({ rows }) => {
      if (!rows[0]) return next(new Error('unknown device'));
      (socket.data as { userId: number }).userId = Number(rows[0].id);
      next();
    },
    (err: Error) => next(err),
  );
});
io.on('connection', (socket) => {
  const { userId } = socket.data as { userId: number };
  let own = sockets.get(userId);
  if (!own) sockets.set(userId, (own = new Set()));
  own.add(socket);
  socket.on('disconnect', () => {
    own.delete(socket);
    if (own.size === 0 && sockets.get(userId) === own) sockets.delete(userId);
  });
  socket.on('message', (input: { message?: unknown }, ack?: (answer: unknown) => void) => {
    const text = typeof input?.message === 'string' ? input.message : '';
    store(userId, 1, text).then(
      (row) => {
        ack?.(envelope({ id: Number(row.id) }));
        sendWebhook(userId, row, text);
      },
      () => ack?.({ data: null, notifications: [{ type: 'error', message: 'internal' }], status: 'ERROR' }),
    );
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => {
  // What was still queued when the run ended (a backlog says which step was the bottleneck):
  // webhooks waiting for one of the 16 connections, transactions waiting for a pooled connection.
  const webhooksWaiting = Object.values(agent.requests).reduce((n, queue) => n + (queue?.length ?? 0), 0);
  process.stderr.write(
    `reference: ${failedWebhooks} webhooks failed; at the end ${webhooksWaiting} webhooks waited for a connection, ` +
      `${pool.waitingCount} transactions for a pooled connection\n`,
  );
  void io.close();
  agent.destroy();
  void pool
    .end()
    .then(() => embedded?.stop())
    .then(() => process.exit(0));
});
