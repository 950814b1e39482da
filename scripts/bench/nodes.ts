// `nodes`: Palaver past one machine, on paper and measured. The same total load on one node and
// then on three (separate processes on one PostgreSQL database, REDIS_URL set on each, so that
// notices and Socket.IO broadcasts cross nodes through a Redis of the benchmark's own). Each
// customer's socket stays on its node (a sticky load balancer); the Service (capacity-service.ts)
// answers every message through the Service API of the *next* node, so with three nodes every
// answer is written on one node and reaches its socket on another. Per run: exchanges a second
// (a customer's message and the answer), cross-node answers a second, p50/p99 from the
// customer's emit to the answer on its socket, sent/answered/lost, and what an exchange costs:
// node CPU, PostgreSQL commits and backend CPU, Redis commands, PUBLISHes, bytes and CPU
// (usage.ts, less what the same processes use idle). With the ceilings this machine's
// PostgreSQL and Redis reach (ceilings.ts), that makes the capacity model of N nodes
// (docs/performance.md, "Past one node: the capacity model").
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { Socket } from 'socket.io-client';
import { connectOne, register, serviceFailures } from './capacity.ts';
import { postgresCommitsCeiling, redisOpsCeiling, type Ceiling } from './ceilings.ts';
import { percentile } from './load.ts';
import { drained, metricsOf, startNode, startPalaver, type BenchNode, type BenchPalaver } from './palaver.ts';
import { freePort, freshDatabase, progress, serviceNodeArgs, startHelper, type Metric } from './support.ts';
import { UsageMeter, usageBetween, type UsageDelta } from './usage.ts';

export interface NodesOptions {
  /**
   * The runs, each at the same total load: nodes serving customers (1 and 3 by default), and
   * listeners, nodes that take no customer and no Service call (`--nodes-counts 1,3,1+1`): all
   * a listener does is receive every other node's notices, so its CPU is what one more node
   * costs for each exchange anywhere.
   */
  nodeCounts: Array<{ serving: number; listening: number }>;
  /** Customers' sockets in all, spread evenly over the nodes. */
  conversations: number;
  /** Customer messages a second in all (each answered by the Service). */
  rate: number;
  /** How long the measured load lasts. */
  seconds: number;
}

interface Customer {
  socket: Socket;
  node: number;
  index: number;
  seq: number;
}

/** What one exchange (a customer's message, its webhook, the Service's answer, the push) cost. */
interface PerExchange {
  node_cpu_ms: number;
  postgres_commits: number;
  postgres_rows_written: number;
  postgres_backend_cpu_ms: number;
  redis_commands: number;
  redis_publishes: number;
  redis_bytes_out: number;
  redis_cpu_ms: number;
  service_cpu_ms: number;
  /** A listener's CPU (each), when the run has listeners. */
  listener_cpu_ms?: number;
}

interface NodesRun {
  nodes: number;
  listeners: number;
  conversations: number;
  seconds: number;
  sent: number;
  answered: number;
  refused: number;
  errors: number;
  /** Acknowledged as stored, and no answer on the customer's socket within a minute. */
  lost: number;
  service_failures: number;
  exchanges_per_second: number;
  cross_node_per_second: number;
  p50_ms: number;
  p99_ms: number;
  /** Webhooks not yet sent as the load ends (all nodes): answers wait behind them. */
  outbox_pending: number;
  /** The load generator's own event-loop delay (p99) while it sent: a starved generator adds its wait to every latency. */
  generator_delay_p99_ms: number;
  /** Each node's CPU over the measured stretch, percent of a core. */
  node_cpu_percent: number[];
  per_exchange: PerExchange;
  redis_calls_per_exchange: Record<string, number>;
  /** What the watched processes use with no load, per second (subtracted from the figures above). */
  idle_per_second: { node_cpu_ms: number; postgres_commits: number; redis_commands: number };
  load_average: number[];
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, places = 2) => Math.round(n * 10 ** places) / 10 ** places;
/** PostgreSQL 15 flushes a backend's statistics at most every second, and an idle one within 10 s. */
const STATS_FLUSH_MS = 11_000;

/** A redis-server of the benchmark's own on a free port: its INFO counts this benchmark's commands alone. */
async function startRedisServer(): Promise<{ url: string; port: number; client: Redis; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  // Connection attempts go on (50 ms apart) until the server listens; the PING waits for it.
  const client = new Redis(url, { retryStrategy: () => 50, maxRetriesPerRequest: null });
  client.on('error', () => undefined);
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`))));
  try {
    await Promise.race([client.ping(), exited]);
  } catch (err) {
    client.disconnect();
    child.kill('SIGTERM');
    throw err;
  }
  return { url, port, client, process: child };
}

/** The exchange's cost: the load stretch's usage, less what the same time costs idle. */
function perExchange(load: UsageDelta, idle: UsageDelta, exchanges: number, nodes: number, listeners: number): PerExchange {
  const idleShare = load.seconds / idle.seconds;
  const less = (busy: number, quiet: number) => Math.max(0, busy - quiet * idleShare) / exchanges;
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  return {
    node_cpu_ms: round(less(sum(load.processes.slice(0, nodes)), sum(idle.processes.slice(0, nodes))) * 1000, 3),
    postgres_commits: round(less(load.pg.commits, idle.pg.commits), 2),
    postgres_rows_written: round(less(load.pg.rowsWritten, idle.pg.rowsWritten), 2),
    postgres_backend_cpu_ms: round(less(load.pg.backendCpu, idle.pg.backendCpu) * 1000, 3),
    redis_commands: round(less(load.redis.commands, idle.redis.commands), 2),
    redis_publishes: round(less(load.redis.calls.publish ?? 0, idle.redis.calls.publish ?? 0), 2),
    redis_bytes_out: Math.round(less(load.redis.bytesOut, idle.redis.bytesOut)),
    redis_cpu_ms: round(less(load.redis.cpu, idle.redis.cpu) * 1000, 3),
    service_cpu_ms: round(less(load.processes[nodes] ?? 0, idle.processes[nodes] ?? 0) * 1000, 3),
    ...(listeners > 0
      ? {
          listener_cpu_ms: round((less(sum(load.processes.slice(nodes + 1)), sum(idle.processes.slice(nodes + 1))) * 1000) / listeners, 3),
        }
      : {}),
  };
}

async function runOn(
  count: number,
  listeners: number,
  options: NodesOptions,
  redis: { url: string; client: Redis },
  service: { url: string; pid: number },
): Promise<NodesRun> {
  const database = await freshDatabase(`nodes${count}_${listeners}`);
  const nodes: BenchNode[] = [];
  const listening: BenchNode[] = [];
  let meter: UsageMeter | undefined;
  const customers: Customer[] = [];
  try {
    // The first node alone: it migrates the database and makes the account and the Service.
    const first: BenchPalaver = await startPalaver(database.url, `${service.url}/hook`, { redisUrl: redis.url });
    nodes.push(first);
    while (nodes.length < count) nodes.push(await startNode(database.url, { redisUrl: redis.url }));
    while (listening.length < listeners) listening.push(await startNode(database.url, { redisUrl: redis.url }));
    await fetch(`${service.url}/configure`, {
      method: 'POST',
      body: JSON.stringify({ palaverUrls: nodes.map((n) => n.url), apiKey: first.service.apiKey }),
    });

    const pending = new Map<string, bigint>();
    let latencies: number[] = [];
    let crossed = 0;
    let refused = 0;
    let errors = 0;
    for (let offset = 0; offset < options.conversations; offset += 100) {
      const batch = Array.from({ length: Math.min(100, options.conversations - offset) }, (_, i) => offset + i);
      const opened = await Promise.all(
        batch.map(async (index) => {
          const node = index % count;
          const url = nodes[node]?.url ?? '';
          const identification = `${first.account.identification}:bench-nodes${count}-${index.toString().padStart(6, '0')}`;
          // Sticky: the customer registers and keeps its socket on one node.
          if (!(await register(url, identification))) throw new Error(`customer ${index} could not register on node ${node}`);
          const socket = await connectOne(url, identification);
          if (!socket) throw new Error(`customer ${index} could not connect to node ${node}`);
          return { socket, node, index, seq: 0 };
        }),
      );
      for (const customer of opened) {
        customer.socket.on('message', (message: { typeId?: number; message?: string | null }) => {
          if (message.typeId !== 2 || !message.message?.startsWith('re: ')) return;
          const text = message.message.slice(4);
          const t0 = pending.get(text);
          if (t0 === undefined) return;
          pending.delete(text);
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          // The Service answered through the node after this customer's (capacity-service.ts).
          if ((customer.node + 1) % count !== customer.node) crossed += 1;
        });
        customers.push(customer);
      }
    }
    progress(`nodes: ${count} node(s)${listeners ? ` and ${listeners} listener(s)` : ''}, ${customers.length} customers' sockets open`);

    const send = (customer: Customer) => {
      customer.seq += 1;
      // n<node>.: the Service answers through another node than this one.
      const text = `n${customer.node}.c${customer.index}.${customer.seq}`;
      pending.set(text, process.hrtime.bigint());
      customer.socket.emit('message', { message: text }, (answer: { status?: string; notifications?: Array<{ message: string }> }) => {
        if (answer.status === 'SUCCESS') return;
        pending.delete(text);
        if (answer.notifications?.some((n) => n.message === 'server_busy')) refused += 1;
        else errors += 1;
      });
    };
    /** `options.rate` messages a second in all, customers in turn, for `seconds`; resolves with the count sent. */
    const load = (seconds: number) =>
      new Promise<number>((resolve) => {
        const total = Math.round(options.rate * seconds);
        const started = performance.now();
        let sent = 0;
        const timer = setInterval(() => {
          const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * options.rate));
          for (; sent < due; sent++) send(customers[sent % customers.length] as Customer);
          if (sent >= total) {
            clearInterval(timer);
            resolve(sent);
          }
        }, 5);
      });
    const answersIn = async (waitMs: number) => {
      for (let waited = 0; waited < waitMs && pending.size > 0; waited += 100) await tick(100);
    };
    const quiet = async () => {
      for (const node of nodes) await drained(node.url);
    };

    // Warm-up, unmeasured: every node's code, pools and the Service's connections warm.
    await load(Math.min(10, options.seconds / 3));
    await answersIn(60_000);
    await quiet();
    const failuresBefore = await serviceFailures(service.url);
    meter = await UsageMeter.open(new URL(database.url).pathname.slice(1), redis.client, [
      ...nodes.map((n) => n.child.pid ?? 0),
      service.pid,
      ...listening.map((n) => n.child.pid ?? 0),
    ]);
    await tick(STATS_FLUSH_MS);
    const idleFrom = await meter.read();
    await tick(10_000);
    const loadFrom = await meter.read();

    latencies = [];
    crossed = 0;
    refused = 0;
    errors = 0;
    pending.clear();
    const load0 = os.loadavg();
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = performance.now();
    const sent = await load(options.seconds);
    const windowSeconds = (performance.now() - started) / 1000;
    delay.disable();
    const loadUntil = await meter.read();
    const outboxPending = (await metricsOf(first.url)).palaver_deliveries_pending ?? 0;
    await answersIn(60_000);
    const lost = pending.size;
    await quiet();
    await tick(STATS_FLUSH_MS);
    const loadTo = await meter.read();
    const idle = usageBetween(idleFrom, loadFrom);
    const busy = usageBetween(loadFrom, loadTo);
    // Each node's share of a core while the load ran (the stretch after it is mostly idle).
    const during = usageBetween(loadFrom, loadUntil);
    const sorted = [...latencies].sort((a, b) => a - b);
    const answered = sorted.length;
    const run: NodesRun = {
      nodes: count,
      listeners,
      conversations: customers.length,
      seconds: round(windowSeconds, 1),
      sent,
      answered,
      refused,
      errors,
      lost,
      service_failures: (await serviceFailures(service.url)) - failuresBefore,
      exchanges_per_second: round(answered / windowSeconds, 1),
      cross_node_per_second: round(crossed / windowSeconds, 1),
      p50_ms: round(percentile(sorted, 50), 1),
      p99_ms: round(percentile(sorted, 99), 1),
      outbox_pending: outboxPending,
      generator_delay_p99_ms: round(delay.percentile(99) / 1e6, 1),
      node_cpu_percent: nodes.map((_, i) => Math.round(((during.processes[i] ?? 0) / during.seconds) * 100)),
      per_exchange: perExchange(busy, idle, answered, count, listeners),
      redis_calls_per_exchange: Object.fromEntries(
        Object.entries(busy.redis.calls)
          .map(([name, calls]) => [name, round(calls / answered, 2)] as const)
          .filter(([, perOne]) => perOne >= 0.01),
      ),
      idle_per_second: {
        node_cpu_ms: round((idle.processes.slice(0, count).reduce((a, b) => a + b, 0) / idle.seconds) * 1000, 1),
        postgres_commits: round(idle.pg.commits / idle.seconds, 2),
        redis_commands: round(idle.redis.commands / idle.seconds, 2),
      },
      load_average: [...load0, ...os.loadavg()].map((n) => round(n, 2)),
    };
    progress(
      `  ${count} node(s)${listeners ? ` + ${listeners}` : ''}: ${run.sent} sent, ${run.answered} answered, ${run.lost} lost, ${run.refused} refused, ${run.errors} errors; ` +
        `${run.exchanges_per_second}/s, ${run.cross_node_per_second}/s across nodes; p50 ${run.p50_ms} ms, p99 ${run.p99_ms} ms; ` +
        `outbox ${run.outbox_pending}, generator delay p99 ${run.generator_delay_p99_ms} ms; ` +
        `node CPU ${run.node_cpu_percent.join(' / ')}%; per exchange ${JSON.stringify(run.per_exchange)}`,
    );
    return run;
  } finally {
    for (const customer of customers) customer.socket.disconnect();
    await meter?.close();
    await Promise.all([...nodes, ...listening].map((n) => n.stop()));
    await database.drop();
  }
}

/**
 * y = a + b·n through the runs' points (least squares; one run: a constant). A cost does not fall
 * as nodes are added: a falling line is the runs' noise, and is taken flat (their mean).
 */
function line(points: Array<[number, number]>): (n: number) => number {
  const count = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / count;
  const my = points.reduce((s, [, y]) => s + y, 0) / count;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const slope = sxx === 0 ? 0 : Math.max(0, points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0) / sxx);
  return (n) => my + slope * (n - mx);
}

interface ModelRow {
  nodes: number;
  /** Exchanges a second at which each part is full: the nodes' cores (one each), PostgreSQL's commits, its CPU, Redis's one thread, Redis's commands. */
  node_cores: number;
  postgres_commits: number;
  postgres_cpu: number;
  redis_cpu: number;
  redis_commands: number;
  /** The nodes' CPU an exchange costs in all, at this N (the model's T(N)). */
  node_cpu_ms: number;
  capacity: number;
  limit: string;
}

/**
 * N nodes hold min(N × a node's ceiling, PostgreSQL's ceilings ÷ its cost of an exchange,
 * Redis's ceilings ÷ its cost). A node's core is shared between the exchanges it serves and
 * the notices of every exchange anywhere (each notice goes to every node): with a listener's
 * measured cost r, the nodes' CPU for an exchange is T(N) = (T(1) − r) + c + r·N, where c,
 * the cost of an answer written on another node than its customer's socket (smaller group
 * commits, a read of the answer by the socket's node), is what the multi-node run adds beyond
 * its notices; without a listener, a line through the runs. Redis's fan-out grows with its
 * subscribers (a line through the runs, by processes subscribed). PostgreSQL's cost grows once,
 * from one node to several; past that it is the multi-node run's.
 */
function model(runs: NodesRun[], commits: Ceiling, redisOps: Ceiling, postgresCores: number): ModelRow[] {
  const served = runs.filter((run) => run.listeners === 0);
  const single = served.find((run) => run.nodes === 1)?.per_exchange;
  const multi = served.filter((run) => run.nodes > 1).at(-1);
  const r = runs.find((run) => run.per_exchange.listener_cpu_ms !== undefined)?.per_exchange.listener_cpu_ms;
  const byNodes = line(served.map((run) => [run.nodes, run.per_exchange.node_cpu_ms]));
  const nodeCpu =
    single && multi && r !== undefined
      ? (n: number) =>
          single.node_cpu_ms - r + r * n + (n > 1 ? multi.per_exchange.node_cpu_ms - single.node_cpu_ms - (multi.nodes - 1) * r : 0)
      : byNodes;
  const subscribed = (pick: (p: PerExchange) => number) => line(runs.map((run) => [run.nodes + run.listeners, pick(run.per_exchange)]));
  const redisCpu = subscribed((p) => p.redis_cpu_ms);
  const redisCommands = subscribed((p) => p.redis_commands);
  const first = served[0] ?? runs[0];
  if (!first) throw new Error('no run to model');
  const one = single ?? first.per_exchange;
  const several = multi?.per_exchange ?? one;
  return [1, 2, 3, 4, 6, 8, 12, 16, 24, 32].map((n) => {
    const pg = n === 1 ? one : several;
    const row = {
      node_cores: (n * 1000) / nodeCpu(n),
      postgres_commits: commits.perSecond / pg.postgres_commits,
      postgres_cpu: (postgresCores * 1000) / pg.postgres_backend_cpu_ms,
      redis_cpu: 1000 / redisCpu(n),
      redis_commands: redisOps.perSecond / redisCommands(n),
    };
    const [limit, capacity] = Object.entries(row).reduce((a, b) => (b[1] < a[1] ? b : a));
    return {
      nodes: n,
      ...(Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Math.round(v)])) as typeof row),
      node_cpu_ms: round(nodeCpu(n), 3),
      capacity: Math.round(capacity),
      limit,
    };
  });
}

export async function benchNodes(options: NodesOptions): Promise<Metric> {
  const redis = await startRedisServer();
  const stopRedis = () => {
    redis.client.disconnect();
    redis.process.kill('SIGTERM');
  };
  let service: Awaited<ReturnType<typeof startHelper>> | undefined;
  let ceilingDatabase: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  try {
    service = await startHelper('scripts/bench/capacity-service.ts', [], serviceNodeArgs());
    ceilingDatabase = await freshDatabase('ceilings');
    progress('nodes: ceilings (pgbench one-row commits, 16 clients, 10 s; redis-benchmark PUBLISH, 16 clients)');
    const commits = await postgresCommitsCeiling(ceilingDatabase.url, 16, 10);
    await ceilingDatabase.drop();
    const redisOps = await redisOpsCeiling(redis.port, 16, 100_000);
    await redis.client.config('RESETSTAT');
    progress(`  PostgreSQL ${commits.perSecond} commits/s, Redis ${redisOps.perSecond} PUBLISH/s`);
    const runs: NodesRun[] = [];
    for (const { serving, listening } of options.nodeCounts) {
      runs.push(await runOn(serving, listening, options, redis, { url: `http://127.0.0.1:${service.port}`, pid: service.child.pid ?? 0 }));
    }
    // PostgreSQL may use every core of its machine: here, this one's.
    const rows = model(runs, commits, redisOps, os.cpus().length);
    for (const row of rows) progress(`  model: ${JSON.stringify(row)}`);
    const firstOther = rows.find((r) => r.limit !== 'node_cores');
    const last = runs.filter((r) => r.listeners === 0).at(-1) ?? runs.at(-1);
    if (!last) throw new Error('no run: --nodes-counts is empty');
    return {
      value: last.cross_node_per_second,
      unit: `answers/s across nodes (${last.nodes} nodes, p99 ${last.p99_ms} ms, ${last.lost} lost)`,
      runs,
      ceilings: { postgres_commits_per_second: commits, redis_publish_per_second: redisOps },
      model: rows,
      saturates_first: firstOther
        ? `${firstOther.limit} at ${firstOther.nodes} nodes (${firstOther.capacity} exchanges/s)`
        : 'the nodes, up to 32 nodes',
    };
  } finally {
    await ceilingDatabase?.drop();
    service?.stop();
    stopRedis();
  }
}
