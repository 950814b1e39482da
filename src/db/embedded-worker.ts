// Runs inside a worker thread: PGlite (PostgreSQL compiled to WebAssembly) serving the
// PostgreSQL wire protocol on loopback, so the main event loop never runs database work.
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { serveWire } from './embedded-wire.ts';

export interface WorkerInput {
  directory: string;
  /** One BigInt64 slot: nanoseconds PGlite has spent executing, read by the main thread's metrics. */
  busy: SharedArrayBuffer;
  /** Two BigInt64 slots: this thread's V8 heap, used and committed bytes, written every second. */
  heap: SharedArrayBuffer;
}
export type WorkerReply = { type: 'ready'; port: number } | { type: 'error'; message: string };
export type WorkerCommand = { type: 'stop' };

const port = parentPort;
if (!port) throw new Error('embedded-worker must run in a worker thread');
const { directory, busy, heap } = workerData as WorkerInput;

// This thread's own heap (PGlite's JavaScript, the wire's buffers), which the main thread's
// process.memoryUsage() and inspector do not show: for palaver_embedded_database_heap_bytes.
const heapSlots = new BigInt64Array(heap);
const readHeap = () => {
  const stats = getHeapStatistics();
  Atomics.store(heapSlots, 0, BigInt(stats.used_heap_size));
  Atomics.store(heapSlots, 1, BigInt(stats.total_physical_size));
};
readHeap();
setInterval(readHeap, 1000).unref();

try {
  const db = await PGlite.create(directory);
  // PGlite is one session, so a session setting is the whole database's. An ANALYZE samples 300
  // rows per unit of the statistics target, and holds the one connection while it does: every
  // message waits behind the vacuum sweep's analyses (db/vacuum.ts). Ten (PostgreSQL's default
  // before 8.4) samples 3,000 rows instead of 30,000; the statements the node runs look rows up
  // by key, where ten buckets plan the same (docs/performance.md, "Table statistics").
  await db.exec('set default_statistics_target = 10');
  const server = await serveWire(db, { busy: new BigInt64Array(busy) });

  port.on('message', (command: WorkerCommand) => {
    if (command.type !== 'stop') return;
    void (async () => {
      await server.close();
      // A clean close checkpoints, so the next start needs no recovery.
      await db.close();
      port.close();
    })();
  });
  port.postMessage({ type: 'ready', port: server.port } satisfies WorkerReply);
} catch (err) {
  port.postMessage({ type: 'error', message: (err as Error).message } satisfies WorkerReply);
}
