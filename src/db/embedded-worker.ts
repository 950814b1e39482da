// Runs inside a worker thread: PGlite (PostgreSQL compiled to WebAssembly) serving the
// PostgreSQL wire protocol on loopback, so the main event loop never runs database work.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface WorkerInput {
  directory: string;
}
export type WorkerReply = { type: 'ready'; port: number } | { type: 'error'; message: string };
export type WorkerCommand = { type: 'stop' };

const port = parentPort;
if (!port) throw new Error('embedded-worker must run in a worker thread');
const { directory } = workerData as WorkerInput;

try {
  const db = await PGlite.create(directory);
  // PGlite is one session: several sockets would interleave extended-protocol messages
  // of different clients. One connection, and the pool on the other side is sized to match.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
  await server.start();
  const address = server.getServerConn();
  const listening = Number(address.slice(address.lastIndexOf(':') + 1));

  port.on('message', (command: WorkerCommand) => {
    if (command.type !== 'stop') return;
    void (async () => {
      await server.stop();
      // A clean close checkpoints, so the next start needs no recovery.
      await db.close();
      port.close();
    })();
  });
  port.postMessage({ type: 'ready', port: listening } satisfies WorkerReply);
} catch (err) {
  port.postMessage({ type: 'error', message: (err as Error).message } satisfies WorkerReply);
}
