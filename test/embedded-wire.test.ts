// The embedded database's wire server (src/db/embedded-wire.ts), through pg as the server uses
// it: a pipelined batch answered statement by statement, a connection that goes away mid-
// transaction leaving nothing behind for the next, a second connection waiting its turn, the
// requests that come before a startup message, and nothing kept of what it has answered.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PGlite } from '@electric-sql/pglite';
import { expect } from 'chai';
import pg from 'pg';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../src/db/embedded.ts';
import { serveWire } from '../src/db/embedded-wire.ts';

describe('embedded database wire server', function () {
  this.timeout(60_000);
  let dir: string;
  let db: EmbeddedDatabase;
  const clients: pg.Client[] = [];

  async function client(options: Partial<pg.ClientConfig> = {}): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: db.url, ...options });
    // A connection the test cuts reports it; the test reads the outcome itself.
    c.on('error', () => undefined);
    clients.push(c);
    await c.connect();
    return c;
  }

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'palaver-wire-'));
    db = await startEmbeddedDatabase(dir);
    const c = await client();
    await c.query('create table wire_rows (id int primary key, note text)');
    await c.end();
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers each statement of a pipelined batch, an error among them included', async () => {
    const c = await client({ pipeline: true });
    const settled = await Promise.allSettled([
      c.query('select $1::int as n', [1]),
      c.query('select no_such_column'),
      c.query({ name: 'wire_third', text: 'select $1::text as t', values: ['three'] }),
      ...Array.from({ length: 40 }, (_, i) => c.query('select $1::int as n', [i])),
    ]);
    expect(settled[0]).to.deep.include({ status: 'fulfilled' });
    expect((settled[0] as PromiseFulfilledResult<pg.QueryResult>).value.rows).to.deep.equal([{ n: 1 }]);
    expect(settled[1]?.status).to.equal('rejected');
    expect(String((settled[1] as PromiseRejectedResult).reason)).to.match(/no_such_column/);
    expect((settled[2] as PromiseFulfilledResult<pg.QueryResult>).value.rows).to.deep.equal([{ t: 'three' }]);
    expect(settled.slice(3).map((s) => (s as PromiseFulfilledResult<pg.QueryResult<{ n: number }>>).value.rows[0]?.n)).to.deep.equal(
      Array.from({ length: 40 }, (_, i) => i),
    );
    await c.end();
  });

  it('rolls back what a connection that went away left open, and clears its prepared statements and settings', async () => {
    const first = await client();
    await first.query('begin');
    await first.query({ name: 'wire_insert', text: 'insert into wire_rows (id, note) values ($1, $2)', values: [1, 'never committed'] });
    await first.query(`set statement_timeout = '1234ms'`);
    const closed = new Promise((resolve) => first.once('end', resolve));
    (first as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    await closed;

    const next = await client();
    expect((await next.query('select count(*)::int as n from wire_rows')).rows).to.deep.equal([{ n: 0 }]);
    expect((await next.query('show statement_timeout')).rows).to.deep.equal([{ statement_timeout: '0' }]);
    // The same statement name prepares again: nothing of the first connection's is left.
    await next.query({ name: 'wire_insert', text: 'insert into wire_rows (id, note) values ($1, $2)', values: [2, 'kept'] });
    expect((await next.query('select id, note from wire_rows')).rows).to.deep.equal([{ id: 2, note: 'kept' }]);
    expect((await next.query('select pg_current_xact_id_if_assigned() is null as idle')).rows).to.deep.equal([{ idle: true }]);
    await next.end();
  });

  it('lets a second connection wait until the first has closed (PGlite is one session)', async () => {
    const first = await client();
    await first.query('begin');
    await first.query('insert into wire_rows (id, note) values (3, $1)', ['first']);
    const second = new pg.Client({ connectionString: db.url });
    clients.push(second);
    let connected = false;
    const connecting = second.connect().then(() => {
      connected = true;
    });
    // The first still has the session: its transaction goes on undisturbed.
    await first.query('insert into wire_rows (id, note) values (4, $1)', ['first']);
    expect(connected).to.equal(false);
    await first.query('commit');
    await first.end();
    await connecting;
    expect((await second.query('select id from wire_rows where id in (3, 4) order by id')).rows).to.deep.equal([{ id: 3 }, { id: 4 }]);
    await second.end();
  });

  it('closes a connection that sends a message whose length is shorter than itself, and serves the next', async () => {
    const socket = connect(Number(new URL(db.url).port), '127.0.0.1');
    const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
    const startup = Buffer.alloc(8);
    startup.writeInt32BE(8 + params.length, 0);
    startup.writeInt32BE(196608, 4);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => {
      // Past the startup's answer (ReadyForQuery, 'Z'), a Query message claiming a length of -1.
      socket.on('data', (chunk: Buffer) => {
        if (chunk.includes(0x5a)) resolve();
      });
      socket.write(Buffer.concat([startup, params]));
    });
    socket.write(Buffer.from([0x51, 0xff, 0xff, 0xff, 0xff]));
    await closed;
    const c = await client();
    expect((await c.query('select 2 as two')).rows).to.deep.equal([{ two: 2 }]);
    await c.end();
  });

  it('refuses TLS in plain text before the startup message, as a server without it does', async () => {
    const socket = connect(Number(new URL(db.url).port), '127.0.0.1');
    const request = Buffer.alloc(8);
    request.writeInt32BE(8, 0);
    request.writeInt32BE(80877103, 4);
    const answer = await new Promise<Buffer>((resolve, reject) => {
      socket.once('data', resolve);
      socket.once('error', reject);
      socket.write(request);
    });
    socket.destroy();
    expect(answer.toString()).to.equal('N');
    // The session is free again for the next client.
    const c = await client();
    expect((await c.query('select 1 as one')).rows).to.deep.equal([{ one: 1 }]);
    await c.end();
  });

  it('keeps nothing of what it has answered, however much went through', async function () {
    // PGlite's own output handler parses every message it answers and keeps the parsed messages
    // until its next execProtocol(), which a wire server never calls: its thread's heap grew by
    // everything ever answered. Served here in this thread, to read the heap after a full GC.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const live = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const pglite = await PGlite.create();
    const server = await serveWire(pglite);
    const c = new pg.Client({ host: '127.0.0.1', port: server.port, user: 'postgres', database: 'postgres' });
    try {
      await c.connect();
      await c.query(`select repeat('x', 1000) as r`);
      const before = live();
      // 64 MB of answers.
      for (let i = 0; i < 64; i += 1) {
        const { rows } = await c.query<{ r: string }>(`select repeat('x', 1048576) as r`);
        expect(rows[0]?.r.length).to.equal(1048576);
      }
      const grown = live() - before;
      expect(grown, `the heap grew by ${Math.round(grown / 2 ** 20)} MB`).to.be.below(16 * 2 ** 20);
    } finally {
      await c.end().catch(() => undefined);
      await server.close();
      await pglite.close();
    }
  });
});
