// The baselines, in a process of their own like Palaver: a minimal Koa route and a bare
// Socket.IO handler, each doing one plain INSERT into the same PostgreSQL; and a bare
// Socket.IO server that emits a given message to every connected socket on request.
// Prints its port.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pg from 'pg';
import { Server } from 'socket.io';

const databaseUrl = process.argv[2];
if (!databaseUrl) throw new Error('usage: baseline-server.ts <database url>');
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
await pool.query(
  'create table if not exists baseline_messages (id bigserial primary key, body text not null, created_at timestamptz not null default now())',
);

const insert = async (body: string) => {
  const { rows } = await pool.query<{ id: string }>('insert into baseline_messages (body) values ($1) returning id', [body]);
  return rows[0]?.id;
};

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method === 'POST' && ctx.path === '/messages') {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const id = await insert(Buffer.concat(chunks).toString('utf8'));
    ctx.body = { data: { messageId: id } };
    return;
  }
  if (ctx.method === 'POST' && ctx.path === '/fanout') {
    // Emits the posted message (the bytes Palaver pushes, so both sides encode and the clients
    // decode the same payload) `count` times to every connected socket.
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const message: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const count = Number(ctx.query.count ?? 1);
    for (let i = 0; i < count; i++) io.emit('message', message);
    ctx.body = { ok: true };
    return;
  }
  ctx.status = 404;
});

const http = createServer(app.callback());
const io = new Server(http, { path: '/socket.io', serveClient: false });
io.on('connection', (socket) => {
  socket.on('message', (body: unknown, ack?: (answer: unknown) => void) => {
    insert(JSON.stringify(body)).then(
      (id) => ack?.({ data: { messageId: id } }),
      () => ack?.({ status: 'ERROR' }),
    );
  });
});
http.listen(0, '127.0.0.1', () => process.stdout.write(`${(http.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => {
  void io.close();
  void pool.end().then(() => process.exit(0));
});
