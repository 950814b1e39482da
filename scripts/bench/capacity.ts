// `capacity`: how many widget conversations one node holds at human pace. Each conversation is a
// socket that sends a message every 5–15 s (at random); a Service in its own process answers
// every message through the Service API. Measured per step of N open conversations: the round
// trip from the user's `message` emit to the agent's answer arriving on that user's socket
// (p50, p99), errors (refused sends, answers that never came, conversations that could not be
// opened), and the server's CPU and RSS.
// The result is the largest N whose p99 stays under 250 ms with no error.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import http from 'node:http';
import { io, type Socket } from 'socket.io-client';
import path from 'node:path';
import { heapSnapshot, memoryAfterGc } from './inspector.ts';
import { percentile } from './load.ts';
import { metricsOf } from './palaver.ts';
import { progress, type Metric } from './support.ts';
import { counterDelta, serverCounters, stagesOf, type ServerCounters, type Stages } from './capacity-stages.ts';

/** The Service's API calls that failed so far (`scripts/bench/capacity-service.ts`: an error answer or none). */
export async function serviceFailures(serviceUrl: string): Promise<number> {
  return (await serviceFailureKinds(serviceUrl)).failures;
}

/** The same, and how many of each kind ("503 server_busy", "ECONNRESET"). */
async function serviceFailureKinds(serviceUrl: string): Promise<{ failures: number; kinds: Record<string, number> }> {
  return (await (await fetch(`${serviceUrl}/failures`)).json()) as { failures: number; kinds: Record<string, number> };
}

/** What failed between two reads, by kind, for the step's line. */
function failedSince(before: Record<string, number>, after: Record<string, number>): string {
  return Object.entries(after)
    .map(([kind, n]) => [kind, n - (before[kind] ?? 0)] as const)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${kind} × ${n}`)
    .join(', ');
}

export interface CapacityOptions {
  /** Open conversations at each step, rising. */
  steps: number[];
  /** How long each step is measured, after its new conversations are open. */
  stepSeconds: number;
  /** The p99 a step must stay under to count. */
  p99LimitMs: number;
  /** After the rising steps: a step at `overloadFactor` times the largest held, then one back at it (recovery). */
  overload: boolean;
  /** How many times the largest held step the overload opens (2, the target's). */
  overloadFactor: number;
  /** The server's inspector: the live heap after a full GC is read at the end of each step. */
  inspectPort?: number;
  /** With the inspector, a heap snapshot of the server at the end of each step goes here. */
  snapshotDir?: string;
  /** The server runs the embedded database, in a worker thread: with the inspector, its heap is read too. */
  embedded?: boolean;
  /** No step after one that did not hold (the reference's run: its knee is all it is asked). */
  stopAtKnee?: boolean;
}

/**
 * The server the conversations are opened on: Palaver, or the one-file reference
 * (reference-pipeline.ts), which speaks the same client calls and has no outbox.
 */
export interface CapacityTarget {
  url: string;
  child: ChildProcess;
  account: { identification: string };
  /** False: no outbox to read from /metrics. */
  outbox?: boolean;
  /** The Service (capacity-service.ts) answering it: each step's round trips are broken into stages with its trace. */
  serviceUrl?: string;
}

interface Conversation {
  socket: Socket;
  timer: ReturnType<typeof setTimeout> | undefined;
  seq: number;
  /** Its sends are `c<index>.<seq>`. */
  index: number;
}

interface StepResult {
  conversations: number;
  sent: number;
  answered: number;
  errors: number;
  /** Refused explicitly (server_busy); counted in errors. */
  refused: number;
  /**
   * The step's new conversations that could not be opened, counted in errors: the device's
   * registration refused (server_busy after five tries, as the admission refuses writes), or
   * the socket's handshake.
   */
  unopened: { not_registered: number; not_connected: number };
  /** Acknowledged, and no answer came within the wait; counted in errors. */
  unanswered: number;
  /**
   * The Service's API calls that failed during the step (an error answer or none): each leaves a
   * message unanswered that Palaver delivered, so an unanswered message is told apart from one
   * whose webhook never came.
   */
  service_failures?: number;
  /** The same by kind: "503 server_busy × 2". */
  service_failure_kinds?: string;
  p50_ms: number;
  p99_ms: number;
  /** Answers the customers' sockets received during the window, to any send (of the window or before it). */
  answers_per_second: number;
  server_cpu_percent: number;
  server_rss_mb: number;
  /** As the step ends (after the wait for late answers): one instant, wherever the GC's sawtooth stands. */
  server_rss_bytes: number;
  /** Over the measured window, read every half second: the mean and the highest. */
  server_rss_mean_bytes: number;
  server_rss_peak_bytes: number;
  /**
   * Of the RSS as the step ends, what the process's WebAssembly memories hold: the embedded
   * database's (PGlite's), in the node's process; about 1 MB on PostgreSQL (other WebAssembly
   * the process loads, such as a module lexer). PGlite's buffers (shared_buffers,
   * 128 MB) fill as the data grows, whatever the conversations, and it never gives memory back.
   */
  server_wasm_rss_bytes: number;
  /** Webhooks due and not yet sent as the step ends: the Service's answers wait behind them (Palaver's outbox). */
  outbox_pending?: number;
  /** The server's live heap after a full GC, at the end of the step (with the inspector). */
  server_heap_mb?: number;
  server_heap_bytes?: number;
  /** The server's RSS right after that GC: without the garbage of the moment the heap's reserve held. */
  server_rss_after_gc_mb?: number;
  server_rss_after_gc_bytes?: number;
  /** As the step ends, before that GC: the V8 heap reserved, and the memory Buffers hold outside it. */
  server_busy_heap_total_mb?: number;
  server_busy_external_mb?: number;
  /** Of that reserve, the young generation's semi-spaces. */
  server_busy_new_space_mb?: number;
  /** Embedded: the database thread's V8 heap in use at the end of the step, and after a full GC of that thread (MB). */
  database_heap_mb?: { busy: number; after_gc: number };
  /** Where a round trip's time went (capacity-stages.ts), with the Service's trace. */
  stages?: Stages;
  /** The Service's process's CPU over the step (percent of a core): the Service, not the server, may be short of a core. */
  service_cpu_percent?: number;
  /** This load generator's event-loop delay over the step (p99, max): its own lateness is in every latency. */
  loader_delay_ms?: { p99: number; max: number };
  /** Palaver's own counters over the step (/metrics). */
  server?: ServerCounters;
}

/** Growth of the server's memory per conversation added between two steps (bytes). */
export interface Growth {
  from: number;
  to: number;
  rss_bytes: number;
  rss_mean_bytes: number;
  rss_peak_bytes: number;
  /** Of rss_bytes, the WebAssembly memories' (the embedded database's) growth. */
  wasm_rss_bytes: number;
  heap_bytes?: number;
  rss_after_gc_bytes?: number;
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CLOCK_TICKS = 100;

/** The process's CPU seconds so far (user + system), from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match?.[1] ? Number(match[1]) * 1024 : 0;
}

/**
 * The resident bytes of a process's WebAssembly memories, from /proc/PID/smaps. V8 reserves each
 * memory whole with its guard region (8 or 10 GiB of address space, never touched) and opens its
 * current size for reading and writing: a read-write anonymous mapping directly followed by an
 * inaccessible one, together 8 GiB or more. Every WebAssembly memory has that shape: PGlite's
 * is all but about 1 MB of it (what a node on PostgreSQL shows).
 */
export function wasmRssBytes(pid: number): number {
  const mappings: Array<{ start: bigint; end: bigint; perms: string; anonymous: boolean; rssKb: number }> = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ (\d+)\s*(\S*)$/.exec(line);
    if (head) {
      const anonymous = head[4] === '0' && head[5] === '';
      mappings.push({ start: BigInt(`0x${head[1]}`), end: BigInt(`0x${head[2]}`), perms: head[3] ?? '', anonymous, rssKb: 0 });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    const last = mappings.at(-1);
    if (rss && last) last.rssKb = Number(rss[1]);
  }
  let total = 0;
  mappings.forEach((open, i) => {
    const guard = mappings[i + 1];
    if (!guard || !open.anonymous || !guard.anonymous || open.perms !== 'rw-p' || guard.perms !== '---p') return;
    if (open.end === guard.start && guard.end - open.start >= 8n << 30n) total += open.rssKb * 1024;
  });
  return total;
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

/**
 * The address conversation `index` comes from: one of its own in 127.0.0.0/8 (Linux routes the
 * whole block to the loopback interface), so that the per-address limits stay as in production
 * (config/capacity.json) and a step is measured as customers on many addresses make it.
 */
export function customerAddress(index: number): string {
  return `127.${1 + Math.floor(index / 65_536)}.${Math.floor(index / 256) % 256}.${index % 256}`;
}

/** POST /devices from `localAddress`, on a connection of its own: the status and Retry-After. */
function postDevice(url: string, identification: string, localAddress?: string): Promise<{ status: number; retryAfter: number }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}/devices`,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: { 'content-type': 'application/json', 'x-iris-identification': identification },
      },
      (response) => {
        response.resume();
        response.once('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: Number(response.headers['retry-after'] ?? 1) }));
        response.once('error', reject);
      },
    );
    request.once('error', reject);
    request.end('{}');
  });
}

/**
 * Registers a device; false when it could not be done. A connection the server closed as idle
 * just as the client reused it fails with a reset (more likely while the machine is overloaded),
 * so a network failure is tried again before it counts as an error; a refusal with server_busy
 * (the node full, http/admission.ts) is sent again after the wait it asks for, as the widget does.
 */
export async function register(url: string, identification: string, localAddress?: string): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const { status, retryAfter } = await postDevice(url, identification, localAddress);
      if (status !== 503) return status >= 200 && status < 300;
      await tick(retryAfter * 1000);
    } catch {
      // A reset or refused connection: once more, on a new connection.
    }
  }
  return false;
}

export function connectOne(url: string, identification: string, localAddress?: string): Promise<Socket | null> {
  return new Promise((resolve) => {
    const socket = io(url, {
      path: '/socket.io',
      transports: ['websocket'],
      reconnection: false,
      auth: { identification },
      ...(localAddress ? { localAddress } : {}),
    });
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', () => {
      socket.disconnect();
      resolve(null);
    });
  });
}

/** Caught up after an overload: no send waits for its answer longer than this. */
const CAUGHT_UP_MS = 2000;
/** How long the node may take to catch up after an overload before it counts as not recovered. */
const CATCH_UP_LIMIT_MS = 300_000;

function heldSteps(steps: StepResult[], p99LimitMs: number): StepResult[] {
  return steps.filter((s) => s.errors === 0 && s.sent > 0 && s.p99_ms < p99LimitMs);
}

export async function benchCapacity(palaver: CapacityTarget, options: CapacityOptions): Promise<Metric> {
  const pid = palaver.child.pid;
  if (!pid) throw new Error('palaver has no pid');
  const conversations: Conversation[] = [];
  /** Sends in flight: text → emit time (ms, on the clock every process shares: see capacity-service.ts). */
  const pending = new Map<string, number>();
  /** Every send not answered yet, measured or not: text → emit time. */
  const outstanding = new Map<string, number>();
  /** Answers received on the customers' sockets, to any send. */
  let answers = 0;
  /** The last answer received: when, and how late (from its send). */
  let lastAnswer = { at: 0, lateMs: 0 };
  /** This step's measured sends: text → [emit, acknowledged, answer on the socket] (NaN: not yet). */
  const timeline = new Map<string, [number, number, number]>();
  const now = () => performance.timeOrigin + performance.now();
  let latencies: number[] = [];
  let errors = 0;
  /** Sends refused with server_busy (a widget sends them again after retryAfter). */
  let refused = 0;
  /** Conversations of the current step that could not be opened: registration, or socket, refused. */
  const unopened = { not_registered: 0, not_connected: 0 };
  const unopenedNone = () => Object.assign(unopened, { not_registered: 0, not_connected: 0 });
  let sent = 0;
  let measuring = false;

  const schedule = (c: Conversation, index: number) => {
    c.timer = setTimeout(
      () => {
        c.seq += 1;
        const text = `c${index}.${c.seq}`;
        const at = now();
        outstanding.set(text, at);
        if (measuring) {
          pending.set(text, at);
          timeline.set(text, [at, NaN, NaN]);
          sent += 1;
        }
        const counted = measuring;
        c.socket.emit('message', { message: text }, (answer: { status?: string; notifications?: Array<{ message: string }> }) => {
          const times = timeline.get(text);
          if (times) times[1] = now();
          if (answer.status !== 'SUCCESS') outstanding.delete(text);
          if (!counted || answer.status === 'SUCCESS') return;
          // Refused explicitly (the node is full): not written, so no answer will come.
          pending.delete(text);
          if (answer.notifications?.some((n) => n.message === 'server_busy')) refused += 1;
          else errors += 1;
        });
        schedule(c, index);
      },
      5000 + Math.random() * 10_000,
    );
  };

  /** Conversations opened so far: the next one's address (customerAddress) follows. */
  let opened = 0;
  const open = async (count: number) => {
    const label = `cap${conversations.length}`;
    for (let offset = 0; offset < count; offset += 100) {
      const batch = Array.from(
        { length: Math.min(100, count - offset) },
        (_, i) => `${palaver.account.identification}:bench-${label}-${(offset + i).toString().padStart(6, '0')}`,
      );
      // Every conversation from an address of its own.
      const addresses = batch.map((_, i) => customerAddress(opened + offset + i));
      const registered = await Promise.all(batch.map((identification, i) => register(palaver.url, identification, addresses[i])));
      const sockets = await Promise.all(
        batch.map((identification, i) => (registered[i] ? connectOne(palaver.url, identification, addresses[i]) : Promise.resolve(null))),
      );
      for (const [i, socket] of sockets.entries()) {
        if (!socket) {
          if (registered[i]) unopened.not_connected += 1;
          else unopened.not_registered += 1;
          continue;
        }
        const index = conversations.length;
        const conversation: Conversation = { socket, timer: undefined, seq: 0, index };
        conversations.push(conversation);
        socket.on('message', (message: { typeId?: number; message?: string | null }) => {
          if (message.typeId !== 2 || !message.message?.startsWith('re: ')) return;
          const text = message.message.slice(4);
          const sentAt = outstanding.get(text);
          if (sentAt !== undefined) {
            outstanding.delete(text);
            answers += 1;
            lastAnswer = { at: now(), lateMs: now() - sentAt };
          }
          const t0 = pending.get(text);
          if (t0 === undefined) return;
          pending.delete(text);
          const at = now();
          latencies.push(at - t0);
          const times = timeline.get(text);
          if (times) times[2] = at;
        });
        schedule(conversation, index);
      }
    }
    opened += count;
  };

  /** Stops the sends of the conversations past the first `count`; their sockets stay open for the answers. */
  const quiet = (count: number) => {
    for (const c of conversations.slice(count)) {
      clearTimeout(c.timer);
      c.timer = undefined;
    }
  };

  /** Closes conversations from the end until `count` are left; what they still wait for is no longer awaited. */
  const close = (count: number) => {
    for (const c of conversations.splice(count)) {
      clearTimeout(c.timer);
      c.socket.disconnect();
      for (let seq = 1; seq <= c.seq; seq++) outstanding.delete(`c${c.index}.${seq}`);
    }
  };

  /**
   * Waits until the node has caught up, at most `limitMs`: the seconds it took, or null if it had
   * not. Caught up: the answers come as they do below the capacity, each within CAUGHT_UP_MS of
   * its send, for a second on end. (Not "nothing unanswered": an answer the bench's Service
   * failed to send would hold that for ever; those are counted apart as lost.)
   */
  const catchUp = async (limitMs: number): Promise<number | null> => {
    const started = now();
    let promptSince: number | undefined;
    for (;;) {
      const prompt = now() - lastAnswer.at < 1000 && lastAnswer.lateMs <= CAUGHT_UP_MS;
      promptSince = prompt ? (promptSince ?? now()) : undefined;
      if (promptSince !== undefined && now() - promptSince >= 1000) return Math.round((promptSince - started) / 100) / 10;
      if (now() - started > limitMs) return null;
      await tick(100);
    }
  };

  /** One step at the conversations open now; `answerWaitMs`: how long late answers are waited for. */
  const measure = async (answerWaitMs: number): Promise<StepResult> => {
    latencies = [];
    errors = 0;
    refused = 0;
    sent = 0;
    pending.clear();
    timeline.clear();
    const readTrace = async () =>
      palaver.serviceUrl
        ? ((await (await fetch(`${palaver.serviceUrl}/trace`)).json()) as {
            cpuSeconds: number;
            messages: Record<string, [number, number]>;
          })
        : undefined;
    const readFailures = async () => (palaver.serviceUrl ? serviceFailureKinds(palaver.serviceUrl) : undefined);
    const trace0 = await readTrace();
    const failures0 = await readFailures();
    const counters0 = palaver.outbox === false ? undefined : await serverCounters(palaver.url);
    const loaderDelay = monitorEventLoopDelay({ resolution: 10 });
    loaderDelay.enable();
    const cpu0 = cpuSeconds(pid);
    const answers0 = answers;
    const t0 = Date.now();
    measuring = true;
    // The busy RSS saws up and down with V8's collections: read through the window, not once.
    const rssSamples: number[] = [];
    const sampler = setInterval(() => rssSamples.push(rssBytes(pid)), 500);
    await tick(options.stepSeconds * 1000);
    clearInterval(sampler);
    measuring = false;
    const seconds = (Date.now() - t0) / 1000;
    const answersPerSecond = Math.round((answers - answers0) / seconds);
    const cpu = (cpuSeconds(pid) - cpu0) / seconds;
    loaderDelay.disable();
    const counters = counters0 && counterDelta(counters0, await serverCounters(palaver.url), seconds);
    const outboxPending = palaver.outbox === false ? undefined : ((await metricsOf(palaver.url)).palaver_deliveries_pending ?? 0);
    // Answers to the last sends of the window may still be on their way.
    for (let waited = 0; waited < answerWaitMs && pending.size > 0; waited += 100) await tick(100);
    const unanswered = pending.size;
    const trace = await readTrace();
    const failures1 = await readFailures();
    const sorted = [...latencies].sort((a, b) => a - b);
    const step: StepResult = {
      conversations: conversations.length,
      sent,
      answered: sorted.length,
      errors: errors + unanswered + unopened.not_registered + unopened.not_connected + refused,
      refused,
      unopened: { ...unopened },
      unanswered,
      p50_ms: Math.round(percentile(sorted, 50) * 10) / 10,
      p99_ms: Math.round(percentile(sorted, 99) * 10) / 10,
      answers_per_second: answersPerSecond,
      server_cpu_percent: Math.round(cpu * 100),
      server_rss_mb: 0,
      server_rss_bytes: rssBytes(pid),
      server_wasm_rss_bytes: wasmRssBytes(pid),
      server_rss_mean_bytes: Math.round(rssSamples.reduce((sum, b) => sum + b, 0) / Math.max(rssSamples.length, 1)),
      server_rss_peak_bytes: Math.max(0, ...rssSamples),
      ...(outboxPending === undefined ? {} : { outbox_pending: outboxPending }),
      ...(failures0 === undefined || failures1 === undefined
        ? {}
        : {
            service_failures: failures1.failures - failures0.failures,
            service_failure_kinds: failedSince(failures0.kinds, failures1.kinds),
          }),
      ...(trace && trace0
        ? {
            stages: stagesOf(timeline, trace.messages),
            service_cpu_percent: Math.round(((trace.cpuSeconds - trace0.cpuSeconds) / seconds) * 100),
          }
        : {}),
      loader_delay_ms: { p99: Math.round(loaderDelay.percentile(99) / 1e5) / 10, max: Math.round(loaderDelay.max / 1e5) / 10 },
      ...(counters ? { server: counters } : {}),
    };
    step.server_rss_mb = mb(step.server_rss_bytes);
    if (options.inspectPort) {
      const busy = await memoryAfterGc(options.inspectPort, false);
      step.server_busy_heap_total_mb = mb(busy.heapTotal);
      step.server_busy_external_mb = mb(busy.external);
      step.server_busy_new_space_mb = mb(busy.newSpace);
      const collected = await memoryAfterGc(options.inspectPort);
      step.server_heap_bytes = collected.heap;
      step.server_heap_mb = mb(step.server_heap_bytes);
      step.server_rss_after_gc_bytes = collected.rss;
      step.server_rss_after_gc_mb = mb(collected.rss);
      if (options.embedded) {
        const database = await memoryAfterGc(options.inspectPort, false, 'worker');
        const databaseCollected = await memoryAfterGc(options.inspectPort, true, 'worker');
        step.database_heap_mb = { busy: mb(database.heap), after_gc: mb(databaseCollected.heap) };
        // After both threads' collections.
        step.server_rss_after_gc_bytes = databaseCollected.rss;
        step.server_rss_after_gc_mb = mb(databaseCollected.rss);
      }
      if (options.snapshotDir) {
        await heapSnapshot(options.inspectPort, path.join(options.snapshotDir, `capacity-${step.conversations}.heapsnapshot`));
        // Embedded: the database's thread has a heap of its own (the process's only worker).
        if (options.embedded) {
          await heapSnapshot(
            options.inspectPort,
            path.join(options.snapshotDir, `capacity-${step.conversations}-database.heapsnapshot`),
            'worker',
          );
        }
      }
    }
    progress(
      `  ${step.conversations} conversations: ${step.sent} sent, ${step.answered} answered, ${step.refused} refused, ` +
        `${step.unanswered} unanswered` +
        (step.unopened.not_registered + step.unopened.not_connected > 0
          ? `, not opened ${step.unopened.not_registered + step.unopened.not_connected} (registration refused ${step.unopened.not_registered}, socket ${step.unopened.not_connected})`
          : '') +
        (step.service_failures ? ` (the Service's API call failed for ${step.service_failures}: ${step.service_failure_kinds})` : '') +
        `, ${step.errors} errors in all, ` +
        `p50 ${step.p50_ms} ms, p99 ${step.p99_ms} ms, ${step.answers_per_second} answers a second, server CPU ${step.server_cpu_percent}%, ` +
        (step.outbox_pending === undefined ? '' : `outbox ${step.outbox_pending}, `) +
        `RSS ${step.server_rss_mb} MB (window: mean ${mb(step.server_rss_mean_bytes)}, peak ${mb(step.server_rss_peak_bytes)}` +
        (step.server_wasm_rss_bytes > 0 ? `; the embedded database's WebAssembly memory ${mb(step.server_wasm_rss_bytes)} MB` : '') +
        ')' +
        (step.service_cpu_percent === undefined ? '' : `, Service CPU ${step.service_cpu_percent}%`) +
        `, loader delay p99 ${step.loader_delay_ms?.p99} ms max ${step.loader_delay_ms?.max} ms` +
        (step.stages ? `\n      stages: ${JSON.stringify(step.stages)}` : '') +
        (step.server ? `\n      server: ${JSON.stringify(step.server)}` : '') +
        (step.server_heap_mb === undefined
          ? ''
          : `, heap after GC ${step.server_heap_mb} MB, RSS after GC ${step.server_rss_after_gc_mb} MB ` +
            `(before: reserved ${step.server_busy_heap_total_mb} MB, young generation ${step.server_busy_new_space_mb} MB, ` +
            `external ${step.server_busy_external_mb} MB)`) +
        (step.database_heap_mb
          ? `; the database thread's heap ${step.database_heap_mb.busy} MB, ${step.database_heap_mb.after_gc} MB after its GC`
          : ''),
    );
    return step;
  };

  const steps: StepResult[] = [];
  let overload: StepResult | undefined;
  let recovery: StepResult | undefined;
  /** The overload's sends answered after its wait, and never; the seconds the node took to catch up. */
  let late = 0;
  let lost = 0;
  let catchUpSeconds: number | null = null;
  try {
    for (const target of options.steps) {
      progress(`capacity: opening conversations up to ${target}`);
      unopenedNone();
      await open(target - conversations.length);
      // Let the new conversations reach their pace before measuring.
      await tick(5000);
      const step = await measure(10_000);
      steps.push(step);
      // Past the limit by far: larger steps would only measure a queue.
      if (step.errors > step.sent * 0.05 || step.p99_ms > options.p99LimitMs * 8) break;
      if (options.stopAtKnee && heldSteps([step], options.p99LimitMs).length === 0) break;
    }
    // Past the capacity (twice it by default): answers must keep coming (later), refusals be explicit, nothing
    // acknowledged go unanswered; then back at the capacity, the node must recover by itself.
    const knee = heldSteps(steps, options.p99LimitMs).at(-1)?.conversations;
    if (options.overload && knee) {
      const load = Math.round(knee * options.overloadFactor);
      progress(`capacity: overload, opening conversations up to ${load} (${options.overloadFactor} times the ${knee} held)`);
      unopenedNone();
      await open(load - conversations.length);
      await tick(5000);
      // Acknowledged answers are waited for up to a minute: late is not lost.
      overload = await measure(60_000);
      // Back at the capacity: the others stop sending but stay, to receive what they wait for.
      quiet(knee);
      progress(`capacity: back to ${knee} conversations, waiting for the node to catch up`);
      catchUpSeconds = await catchUp(CATCH_UP_LIMIT_MS);
      // Stragglers of the queue the node has worked off, then what is still unanswered is lost.
      await tick(5000);
      lost = pending.size;
      late = overload.unanswered - lost;
      progress(
        catchUpSeconds === null
          ? `  not caught up within ${CATCH_UP_LIMIT_MS / 1000} s; of the overload's sends ${late} answered late, ${lost} not answered`
          : `  caught up in ${catchUpSeconds} s; of the overload's sends ${late} answered late, ${lost} not answered`,
      );
      close(knee);
      await tick(5000);
      unopenedNone();
      recovery = await measure(10_000);
    }
  } finally {
    for (const c of conversations) {
      clearTimeout(c.timer);
      c.socket.disconnect();
    }
  }
  const best = heldSteps(steps, options.p99LimitMs).at(-1);
  // RSS grows with the conversations (their sockets, feeds, kept callers, buffers); read busy,
  // as /proc has it at the end of each step, the growth per added conversation between steps.
  const growth: Growth[] = steps.slice(1).map((step, i) => {
    const prev = steps[i] as StepResult;
    const added = Math.max(step.conversations - prev.conversations, 1);
    const perAdded = (key: 'server_heap_bytes' | 'server_rss_after_gc_bytes') => {
      const [now, before] = [step[key], prev[key]];
      return now === undefined || before === undefined ? undefined : Math.round((now - before) / added);
    };
    const [heapBytes, rssAfterGcBytes] = [perAdded('server_heap_bytes'), perAdded('server_rss_after_gc_bytes')];
    const heap = heapBytes === undefined ? {} : { heap_bytes: heapBytes };
    const afterGc = rssAfterGcBytes === undefined ? {} : { rss_after_gc_bytes: rssAfterGcBytes };
    return {
      from: prev.conversations,
      to: step.conversations,
      rss_bytes: Math.round((step.server_rss_bytes - prev.server_rss_bytes) / added),
      rss_mean_bytes: Math.round((step.server_rss_mean_bytes - prev.server_rss_mean_bytes) / added),
      rss_peak_bytes: Math.round((step.server_rss_peak_bytes - prev.server_rss_peak_bytes) / added),
      wasm_rss_bytes: Math.round((step.server_wasm_rss_bytes - prev.server_wasm_rss_bytes) / added),
      ...heap,
      ...afterGc,
    };
  });
  return {
    value: best?.conversations ?? 0,
    unit: `conversations (p99 < ${options.p99LimitMs} ms, no error)`,
    steps,
    growth,
    ...(overload && recovery
      ? {
          overload: {
            conversations: overload.conversations,
            sent: overload.sent,
            // Within a minute of the step's end; later, while the node caught up; never.
            answered: overload.answered,
            late,
            lost,
            refused: overload.refused,
            unopened: overload.unopened,
            other_errors:
              overload.errors - overload.refused - overload.unanswered - overload.unopened.not_registered - overload.unopened.not_connected,
            p50_ms: overload.p50_ms,
            p99_ms: overload.p99_ms,
            answers_per_second: overload.answers_per_second,
          },
          // From the load's fall back to the capacity until no answer was more than a moment late (null: not within the limit).
          caught_up_seconds: catchUpSeconds,
          recovered: catchUpSeconds !== null && recovery.errors === 0 && recovery.p99_ms < options.p99LimitMs,
          recovery,
        }
      : {}),
  };
}
