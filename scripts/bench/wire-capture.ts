// Records every protocol message the server writes to its database, for wire-replay.ts:
// `BENCH_NODE_ARGS="--import tsx --import ./scripts/bench/wire-capture.ts" BENCH_WIRE_CAPTURE=FILE
// npm run bench -- --only capacity --capacity-modes embedded …`. On the embedded database the
// node's one session sees exactly this stream, in this order (one connection at a time:
// db/embedded-wire.ts), so replaying it into a fresh PGlite on one thread rebuilds the same data
// and shows what each statement costs PGlite with nothing else on the machine's cores in the way.
// Every message goes through pg's Connection#_send (queries, parses, binds, executes, syncs; the
// startup message and Flush do not, and replay needs neither). Held in memory and written at exit,
// so that capturing costs the measured server no system call per message.
import { writeFileSync } from 'node:fs';
import pg from 'pg';

const file = process.env.BENCH_WIRE_CAPTURE;
if (!file) throw new Error('wire-capture.ts: set BENCH_WIRE_CAPTURE to the file to write');
/**
 * Only a Palaver node on the embedded database records: the bench gives BENCH_NODE_ARGS to every
 * server it starts (the PostgreSQL node of the other benchmarks, the one-file reference), and the
 * last of them to exit would write the file.
 */
const embeddedNode = (process.argv[1] ?? '').endsWith('src/main.ts') && !process.env.DATABASE_URL;

/** Per message: its length (u32 LE), when it was written (ms on performance.now(), f64 LE), its bytes. */
const chunks: Buffer[] = [];
if (embeddedNode) {
  const Connection = (pg as unknown as { Connection: { prototype: object } }).Connection;
  const send = Reflect.get(Connection.prototype, '_send') as (this: unknown, buffer: Buffer) => boolean;
  Reflect.set(Connection.prototype, '_send', function (this: unknown, buffer: Buffer) {
    const head = Buffer.alloc(12);
    head.writeUInt32LE(buffer.length, 0);
    head.writeDoubleLE(performance.now(), 4);
    chunks.push(head, Buffer.from(buffer));
    return send.call(this, buffer);
  });
  process.on('exit', () => writeFileSync(file, Buffer.concat(chunks)));
}
