// Starts the embedded PostgreSQL (PGlite) in a worker thread and hands back a connection URL.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { WorkerCommand, WorkerInput, WorkerReply } from './embedded-worker.ts';
import { acquireDataDirLock } from './data-dir-lock.ts';

export interface EmbeddedDatabase {
  url: string;
  /** Seconds PGlite's thread has spent executing statements since the start (its one session's busy time). */
  busySeconds: () => number;
  /** The database thread's V8 heap (PGlite's JavaScript and buffers, not its WebAssembly memory), as it last read it. */
  heapBytes: () => { used: number; committed: number };
  stop(): Promise<void>;
}

/** What the embedded database's thread reports, for the metrics: its busy time and its V8 heap. */
export type EmbeddedReadings = Pick<EmbeddedDatabase, 'busySeconds' | 'heapBytes'>;

/**
 * Under tsx the worker's TypeScript must be loaded through tsx's own loader, which Node 20
 * does not pass on to worker threads; compiled JavaScript is loaded as it is.
 */
function spawnWorker(workerData: WorkerInput): Worker {
  const entry = new URL(`./embedded-worker${path.extname(import.meta.url)}`, import.meta.url);
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, { workerData });
  const loader = import.meta.resolve('tsx/esm/api');
  const source = `import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(source, { eval: true, workerData });
}

export async function startEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  const directory = path.resolve(dataDir, 'pglite');
  mkdirSync(directory, { recursive: true });
  const lock = acquireDataDirLock(path.resolve(dataDir));
  // Written by the worker after each call into PGlite, read here without a message between threads.
  const busy = new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT);
  const busyNanoseconds = new BigInt64Array(busy);
  const heap = new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT);
  const heapSlots = new BigInt64Array(heap);
  const worker = spawnWorker({ directory, busy, heap });

  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`embedded database exited with code ${code}`)));
      worker.once('message', (reply: WorkerReply) => {
        if (reply.type === 'ready') resolve(reply.port);
        else reject(new Error(`embedded database failed to start: ${reply.message}`));
      });
    });
  } catch (err) {
    await worker.terminate();
    lock.release();
    throw err;
  }
  worker.removeAllListeners();

  let stopping: Promise<void> | undefined;
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    busySeconds: () => Number(Atomics.load(busyNanoseconds, 0)) / 1e9,
    heapBytes: () => ({ used: Number(Atomics.load(heapSlots, 0)), committed: Number(Atomics.load(heapSlots, 1)) }),
    stop() {
      stopping ??= (async () => {
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        worker.postMessage({ type: 'stop' } satisfies WorkerCommand);
        const timer = setTimeout(() => void worker.terminate(), 5000);
        await exited;
        clearTimeout(timer);
        lock.release();
      })();
      return stopping;
    },
  };
}
