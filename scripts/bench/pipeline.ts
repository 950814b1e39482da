// `pipeline`: answered round trips a second of the whole pipeline — a customer's socket message
// committed and acknowledged, its signed webhook to a Service, the Service's answer through the
// API committed, the answer on the customer's socket — for Palaver, against the one-file
// reference (reference-pipeline.ts) doing the same four steps from the same libraries with the
// same durability. The same closed-loop load drives both (each customer sends its next message
// when the answer to the last has arrived), and the same Service (capacity-service.ts, a process
// of its own for each side) answers both. Per side: round trips a second, p50/p99 of a round
// trip, and CPU per round trip of the server process (all its threads: the embedded database
// too), of the PostgreSQL backends serving its database, and of its Service.
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { io, type Socket } from 'socket.io-client';
import { runLoad, type LoadResult } from './load.ts';
import { drained, startPalaver } from './palaver.ts';
import { startReference } from './reference.ts';
import { freshDatabase, progress, ratio, serviceNodeArgs, startHelper, type Metric } from './support.ts';

export type PipelineMode = 'postgresql' | 'embedded';

export interface PipelineOptions {
  /** Customers, each with one socket and one message in flight at a time. */
  customers: number;
  /** Round trips measured per run (a fifth more first, unmeasured). */
  roundTrips: number;
  modes: PipelineMode[];
}

const CLOCK_TICKS = 100;

/** A process's CPU seconds so far (user + system, all threads), from /proc; null once it is gone. */
function cpuSeconds(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** The PostgreSQL backends serving `database` on this machine (their process title names it). */
function backends(database: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (title.startsWith('postgres: ') && title.includes(` ${database} `)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/**
 * CPU seconds of a database's backends over a measurement. Backends come and go with the pools,
 * so they are looked for every 250 ms; one that ended between two looks loses its last 250 ms.
 */
function backendCpu(database: string) {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const look = (starting: boolean) => {
    for (const pid of backends(database)) {
      const cpu = cpuSeconds(pid);
      if (cpu === null) continue;
      // A backend that started during the measurement counts whole (its start is small).
      if (!first.has(pid)) first.set(pid, starting ? cpu : 0);
      last.set(pid, cpu);
    }
  };
  look(true);
  const timer = setInterval(() => look(false), 250);
  return () => {
    clearInterval(timer);
    look(false);
    let total = 0;
    for (const [pid, cpu] of last) total += cpu - (first.get(pid) ?? 0);
    return total;
  };
}

interface Side {
  label: string;
  url: string;
  /** Customers' identifications start with this. */
  prefix: string;
  serverPid: number;
  servicePid: number;
  /** The PostgreSQL database's name; none for the embedded database (inside the server's process). */
  database?: string;
  sockets: Socket[];
  /** Text of a message in flight → what to call when its answer arrives. */
  waiting: Map<string, () => void>;
}

interface RunResult extends LoadResult {
  /** CPU milliseconds per round trip. */
  server_cpu_ms: number;
  postgresql_cpu_ms?: number;
  service_cpu_ms: number;
}

async function openCustomers(side: Side, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const identification = `${side.prefix}:pipeline-${i.toString().padStart(5, '0')}`;
    const registered = await fetch(`${side.url}/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-iris-identification': identification },
      body: '{}',
    });
    await registered.arrayBuffer();
    if (!registered.ok) throw new Error(`${side.label}: POST /devices answered ${registered.status}`);
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = io(side.url, { path: '/socket.io', transports: ['websocket'], reconnection: false, auth: { identification } });
      s.once('connect', () => resolve(s));
      s.once('connect_error', reject);
    });
    socket.on('message', (message: { typeId?: number; message?: string | null }) => {
      if (message.typeId !== 2 || !message.message?.startsWith('re: ')) return;
      const text = message.message.slice(4);
      side.waiting.get(text)?.();
      side.waiting.delete(text);
    });
    side.sockets.push(socket);
  }
}

let runs = 0;

/** `total` round trips, one in flight per customer; CPU per round trip from /proc. */
async function run(side: Side, total: number): Promise<RunResult> {
  const tag = `r${++runs}.`;
  const server0 = cpuSeconds(side.serverPid) ?? 0;
  const service0 = cpuSeconds(side.servicePid) ?? 0;
  const postgresql = side.database ? backendCpu(side.database) : undefined;
  const result = await runLoad({
    concurrency: side.sockets.length,
    total,
    request: async (worker, index) => {
      const text = `${tag}${index}`;
      const answered = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 30_000);
        side.waiting.set(text, () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      const ack = (await side.sockets[worker]?.timeout(30_000).emitWithAck('message', { message: text })) as
        { status?: string } | undefined;
      if (ack?.status !== 'SUCCESS') {
        side.waiting.delete(text);
        return false;
      }
      return answered;
    },
  });
  const perRoundTrip = (seconds: number) => Math.round((seconds / total) * 1e6) / 1e3;
  return {
    ...result,
    server_cpu_ms: perRoundTrip((cpuSeconds(side.serverPid) ?? 0) - server0),
    ...(postgresql ? { postgresql_cpu_ms: perRoundTrip(postgresql()) } : {}),
    service_cpu_ms: perRoundTrip((cpuSeconds(side.servicePid) ?? 0) - service0),
  };
}

const describe = (r: RunResult) =>
  `${Math.round(r.rate)} round trips/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.errors} errors; CPU a round trip: ` +
  `server ${r.server_cpu_ms} ms${r.postgresql_cpu_ms === undefined ? '' : `, PostgreSQL ${r.postgresql_cpu_ms} ms`}, Service ${r.service_cpu_ms} ms`;

/** The reference's two runs (before and after Palaver's): the mean of each figure. */
function mean(a: RunResult, b: RunResult): RunResult {
  const avg = (x: number, y: number) => Math.round(((x + y) / 2) * 1000) / 1000;
  return {
    rate: (a.rate + b.rate) / 2,
    p50: avg(a.p50, b.p50),
    p99: avg(a.p99, b.p99),
    errors: a.errors + b.errors,
    server_cpu_ms: avg(a.server_cpu_ms, b.server_cpu_ms),
    ...(a.postgresql_cpu_ms !== undefined && b.postgresql_cpu_ms !== undefined
      ? { postgresql_cpu_ms: avg(a.postgresql_cpu_ms, b.postgresql_cpu_ms) }
      : {}),
    service_cpu_ms: avg(a.service_cpu_ms, b.service_cpu_ms),
  };
}

const figures = (r: RunResult) => ({
  round_trips_per_s: Math.round(r.rate),
  p50_ms: r.p50,
  p99_ms: r.p99,
  errors: r.errors,
  cpu_ms_per_round_trip: {
    server: r.server_cpu_ms,
    ...(r.postgresql_cpu_ms === undefined ? {} : { postgresql: r.postgresql_cpu_ms }),
    service: r.service_cpu_ms,
  },
});

async function configure(serviceUrl: string, url: string, apiKey: string): Promise<void> {
  const answer = await fetch(`${serviceUrl}/configure`, { method: 'POST', body: JSON.stringify({ palaverUrl: url, apiKey }) });
  await answer.arrayBuffer();
}

async function pipelineIn(mode: PipelineMode, options: PipelineOptions): Promise<Metric> {
  const cleanups: Array<() => unknown> = [];
  try {
    const palaverService = await startHelper('scripts/bench/capacity-service.ts', [], serviceNodeArgs());
    cleanups.push(() => palaverService.stop());
    const referenceService = await startHelper('scripts/bench/capacity-service.ts', [], serviceNodeArgs());
    cleanups.push(() => referenceService.stop());

    let palaverDatabase: string | undefined;
    let palaverDataDir: string | undefined;
    if (mode === 'postgresql') {
      const database = await freshDatabase('pipeline');
      cleanups.push(() => database.drop());
      palaverDatabase = database.url;
    } else {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'palaver-pipeline-'));
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      palaverDataDir = dataDir;
    }

    const palaver = await startPalaver(palaverDatabase ?? '', `http://127.0.0.1:${palaverService.port}/hook`, { dataDir: palaverDataDir });
    cleanups.push(() => palaver.stop());
    await configure(`http://127.0.0.1:${palaverService.port}`, palaver.url, palaver.service.apiKey);

    const reference = await startReference(mode, `http://127.0.0.1:${referenceService.port}/hook`);
    cleanups.push(() => reference.stop());
    await configure(`http://127.0.0.1:${referenceService.port}`, reference.url, reference.apiKey);

    const pid = (n: number | undefined) => {
      if (!n) throw new Error('a process without a pid');
      return n;
    };
    const name = (url: string | undefined) => (url ? new URL(url).pathname.slice(1) : undefined);
    const ours: Side = {
      label: 'palaver',
      url: palaver.url,
      prefix: palaver.account.identification,
      serverPid: pid(palaver.child.pid),
      servicePid: pid(palaverService.child.pid),
      database: name(palaverDatabase),
      sockets: [],
      waiting: new Map(),
    };
    const theirs: Side = {
      label: 'reference',
      url: reference.url,
      prefix: 'reference',
      serverPid: pid(reference.child.pid),
      servicePid: pid(referenceService.child.pid),
      database: reference.database,
      sockets: [],
      waiting: new Map(),
    };
    cleanups.push(() => [...ours.sockets, ...theirs.sockets].forEach((s) => s.disconnect()));
    progress(`${mode}: ${options.customers} customers on each side`);
    await openCustomers(ours, options.customers);
    await openCustomers(theirs, options.customers);

    // Warm: both sides take a fifth of the load unmeasured; the reference runs before and after
    // Palaver (the machine is shared), and Palaver's outbox is drained around its run.
    const warmUp = Math.ceil(options.roundTrips / 5);
    await run(theirs, warmUp);
    await run(ours, warmUp);
    await drained(palaver.url);
    progress(`reference: ${options.roundTrips} round trips`);
    const before = await run(theirs, options.roundTrips);
    progress(`  ${describe(before)}`);
    progress(`palaver: ${options.roundTrips} round trips`);
    const measured = await run(ours, options.roundTrips);
    progress(`  ${describe(measured)}`);
    await drained(palaver.url);
    progress('reference again (the two runs bracket Palaver)');
    const after = await run(theirs, options.roundTrips);
    progress(`  ${describe(after)}`);
    const baseline = mean(before, after);
    return {
      value: Math.round(measured.rate),
      unit: 'round trips/s',
      baseline: Math.round(baseline.rate),
      ratio: ratio(measured.rate, baseline.rate),
      palaver: figures(measured),
      reference: figures(baseline),
      // CPU per round trip, Palaver's over the reference's: server, and server + PostgreSQL.
      cpu_ratio: ratio(measured.server_cpu_ms, baseline.server_cpu_ms),
      ...(measured.postgresql_cpu_ms !== undefined && baseline.postgresql_cpu_ms !== undefined
        ? {
            cpu_with_postgresql_ratio: ratio(
              measured.server_cpu_ms + measured.postgresql_cpu_ms,
              baseline.server_cpu_ms + baseline.postgresql_cpu_ms,
            ),
          }
        : {}),
      customers: options.customers,
      round_trips: options.roundTrips,
      load_average: os.loadavg().map((n) => Math.round(n * 100) / 100),
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

export async function benchPipeline(options: PipelineOptions): Promise<Metric> {
  const unknown = options.modes.filter((mode) => mode !== 'postgresql' && mode !== 'embedded');
  if (unknown.length > 0) throw new Error(`unknown pipeline mode ${unknown.join(', ')}: postgresql, embedded or both`);
  const [first, ...others] = options.modes;
  if (!first) throw new Error('no pipeline mode');
  const result: Metric = { ...(await pipelineIn(first, options)), mode: first };
  for (const mode of others) result[mode] = await pipelineIn(mode, options);
  return result;
}
