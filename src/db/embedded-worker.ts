// Runs inside a worker thread: PGlite (PostgreSQL compiled to WebAssembly) serving the
// PostgreSQL wire protocol on loopback, so the main event loop never runs database work.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { serveWire } from './embedded-wire.ts';

export interface WorkerInput {
  directory: string;
  /** One BigInt64 slot: nanoseconds PGlite has spent executing, read by the main thread's metrics. */
  busy: SharedArrayBuffer;
}
export type WorkerReply = { type: 'ready'; port: number } | { type: 'error'; message: string };
export type WorkerCommand = { type: 'stop' };

const port = parentPort;
if (!port) throw new Error('embedded-worker must run in a worker thread');
const { directory, busy } = workerData as WorkerInput;

try {
  const db = await PGlite.create(directory);
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
