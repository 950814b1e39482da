// Memory of a process started with --inspect, read over the inspector protocol right after a
// full garbage collection: the live heap, without the garbage of the moment (which made
// readings of the same run differ by a factor of two), and without code in the process. Each
// reading can take the main thread or the worker thread (the embedded database's).
import { createWriteStream } from 'node:fs';
import WebSocket from 'ws';

export interface Memory {
  heap: number;
  rss: number;
  /** The V8 heap's reserved size (live objects and the garbage not yet collected). */
  heapTotal: number;
  /** Memory outside the V8 heap that JavaScript objects hold (Buffers, ArrayBuffers). */
  external: number;
  /** Of heapTotal, the young generation's share (its semi-spaces): sized by the allocation rate, not by what is kept. */
  newSpace: number;
}

async function debuggerUrl(port: number): Promise<string> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}`);
  return url;
}

/** A message from the inspector: an answer (id) or an event (method). */
interface Reply {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: unknown;
}
type Pending = Map<number, { resolve: (result: Record<string, unknown>) => void; reject: (err: Error) => void }>;

/** Settles the call an answer is for. */
function settle(pending: Pending, reply: Reply): void {
  const waiter = reply.id === undefined ? undefined : pending.get(reply.id);
  if (!waiter || reply.id === undefined) return;
  pending.delete(reply.id);
  if (reply.error) waiter.reject(new Error(JSON.stringify(reply.error)));
  else waiter.resolve(reply.result ?? {});
}

/** The inspector's calls over one connection; `onEvent` hears its notifications. */
async function session(port: number, onEvent: (method: string, params: Record<string, unknown>) => void = () => undefined) {
  const socket = new WebSocket(await debuggerUrl(port));
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let next = 0;
  const pending: Pending = new Map();
  // One listener for the connection's life: events also come between calls (a worker's answers).
  socket.on('message', (data: Buffer) => {
    const reply = JSON.parse(data.toString('utf8')) as Reply;
    if (reply.method) onEvent(reply.method, reply.params ?? {});
    settle(pending, reply);
  });
  const call = (method: string, params: object = {}) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  return { call, close: () => socket.close() };
}

/**
 * The inspector's calls to the process's worker thread (the embedded database's thread: the
 * server starts no other, beside node's own for tsx's module hooks), same shape as session()'s.
 * The inspector reaches a worker through the NodeWorker domain: each call goes wrapped in
 * sendMessageToWorker, each answer and event comes back in receivedMessageFromWorker. A worker
 * has a V8 heap of its own, which readings of the main thread never see.
 */
async function workerSession(port: number, onEvent: (method: string, params: Record<string, unknown>) => void = () => undefined) {
  let sessionId: string | undefined;
  let attached: () => void = () => undefined;
  const found = new Promise<void>((resolve) => (attached = resolve));
  let next = 0;
  const pending: Pending = new Map();
  const outer = await session(port, (method, params) => {
    // Not the threads of node's module loader hooks (tsx's), whose URL is node's own.
    const { url } = (params.workerInfo ?? {}) as { url?: string };
    if (method === 'NodeWorker.attachedToWorker' && !sessionId && !url?.startsWith('node:internal/')) {
      sessionId = String(params.sessionId);
      attached();
    } else if (method === 'NodeWorker.receivedMessageFromWorker' && params.sessionId === sessionId) {
      const reply = JSON.parse(String(params.message)) as Reply;
      if (reply.method) onEvent(reply.method, reply.params ?? {});
      settle(pending, reply);
    }
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await outer.call('NodeWorker.enable', { waitForDebuggerOnStart: false });
    await Promise.race([
      found,
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no worker thread on port ${port}`)), 5000))),
    ]);
  } catch (err) {
    // Closed: a node whose inspector still has a client waits for it to leave before it exits.
    outer.close();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  const call = (method: string, params: object = {}) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve, reject });
      outer.call('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
    });
  return { call, close: outer.close };
}

/** The main thread's session, or the worker's. */
export type Thread = 'main' | 'worker';
const open = (port: number, thread: Thread, onEvent?: (method: string, params: Record<string, unknown>) => void) =>
  thread === 'main' ? session(port, onEvent) : workerSession(port, onEvent);

/** The process's memory as it is, and after a full GC (`gc`: false reads it as it is only). */
export async function memoryAfterGc(port: number, gc = true, thread: Thread = 'main'): Promise<Memory> {
  const { call, close } = await open(port, thread);
  try {
    // Twice: the first collection's finalisers can free more for the second.
    if (gc) {
      await call('HeapProfiler.collectGarbage');
      await call('HeapProfiler.collectGarbage');
    }
    const { result } = (await call('Runtime.evaluate', {
      expression: `JSON.stringify({ ...process.memoryUsage(), newSpace: process.getBuiltinModule('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size })`,
      returnByValue: true,
    })) as { result: { value: string } };
    const usage = JSON.parse(result.value) as { heapUsed: number; rss: number; heapTotal: number; external: number; newSpace?: number };
    return { heap: usage.heapUsed, rss: usage.rss, heapTotal: usage.heapTotal, external: usage.external, newSpace: usage.newSpace ?? 0 };
  } finally {
    close();
  }
}

/**
 * Writes a heap snapshot of the process to `file` (open it in Chrome's DevTools, Memory tab, or
 * compare two with heap-diff.ts). The snapshot itself collects garbage first.
 */
export async function heapSnapshot(port: number, file: string, thread: Thread = 'main'): Promise<void> {
  const out = createWriteStream(file);
  const { call, close } = await open(port, thread, (method, params) => {
    if (method === 'HeapProfiler.addHeapSnapshotChunk') out.write(String(params.chunk));
  });
  try {
    await call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  } finally {
    close();
    await new Promise((resolve) => out.end(resolve));
  }
}

/** A node of a sampled allocation profile: bytes allocated by a function, and by what it called. */
export interface AllocationNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocationNode[];
}

/**
 * What the process allocates over `seconds`, garbage included (the objects collected since
 * are kept in the profile), sampled every `interval` bytes: where the garbage of the moment,
 * which sizes the V8 heap's reserve, comes from. `promoted`: only what outlived the young
 * generation (kept, or collected by a full GC): the old generation's allocation rate, which
 * sets how far V8 lets the old generation grow before its next full collection.
 */
export async function sampleAllocations(
  port: number,
  seconds: number,
  promoted = false,
  interval = 16_384,
  thread: Thread = 'main',
): Promise<AllocationNode> {
  const { call, close } = await open(port, thread);
  try {
    await call('HeapProfiler.enable');
    await call('HeapProfiler.startSampling', {
      samplingInterval: interval,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: !promoted,
    });
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const { profile } = (await call('HeapProfiler.stopSampling')) as { profile: { head: AllocationNode } };
    return profile.head;
  } finally {
    close();
  }
}
