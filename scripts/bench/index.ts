// `npm run bench [-- --only NAME ...]`: every benchmark beside its baseline, in one run on this
// machine's PostgreSQL (BENCH_DATABASE_URL to change), with progress on stderr, a table on
// stdout, and bench-results.json. Sizes are options; the defaults finish in a few minutes.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { benchConnections } from './connections.ts';
import { benchDelivery } from './delivery.ts';
import { benchFanout } from './fanout.ts';
import { benchIngestRest, benchIngestSocket } from './ingest.ts';
import { benchInbox } from './inbox.ts';
import { benchLatency } from './latency.ts';
import { drained, startPalaver, type BenchPalaver } from './palaver.ts';
import { freePort, freshDatabase, ratio, serviceNodeArgs, settle, startHelper, writeResults, type Metric } from './support.ts';
import { benchWidgetSize } from './widget-size.ts';
import { benchCapacity, type Growth as CapacityGrowth } from './capacity.ts';
import { benchNodes } from './nodes.ts';
import { benchPipeline, type PipelineMode } from './pipeline.ts';
import { referenceCapacity } from './reference.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';

const { values } = parseArgs({
  options: {
    only: { type: 'string', multiple: true },
    deliveries: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '32' },
    messages: { type: 'string', default: '3000' },
    sockets: { type: 'string', default: '100' },
    'fanout-messages': { type: 'string', default: '300' },
    'fanout-senders': { type: 'string', default: '4' },
    rate: { type: 'string', default: '50' },
    'latency-messages': { type: 'string', default: '300' },
    connections: { type: 'string', default: '10000' },
    // The target (5,000) is a default step, so that the default run says whether it holds.
    'capacity-steps': { type: 'string', default: '1000,3000,5000' },
    'capacity-seconds': { type: 'string', default: '20' },
    /** The p99 a step must stay under to count as held (250 ms, the target; a busy machine may need more to find its knee). */
    'capacity-p99': { type: 'string', default: '250' },
    /** postgresql, embedded, or both (the default: each with its overload step). */
    'capacity-modes': { type: 'string', default: 'both' },
    'inbox-conversations': { type: 'string', default: '100000' },
    'inbox-pages': { type: 'string', default: '40' },
    'inbox-answers': { type: 'string', default: '100' },
    // One node, then three, at the same total load (customer messages a second in all).
    'nodes-counts': { type: 'string', default: '1,3' },
    'nodes-conversations': { type: 'string', default: '400' },
    'nodes-rate': { type: 'string', default: '40' },
    'nodes-seconds': { type: 'string', default: '30' },
    'pipeline-customers': { type: 'string', default: '32' },
    'pipeline-round-trips': { type: 'string', default: '10000' },
    /** postgresql, embedded, or both (the default run measures both). */
    'pipeline-modes': { type: 'string', default: 'both' },
    // Larger capacity steps for longer, and the one-file reference beside them: far longer than the default run.
    full: { type: 'boolean', default: false },
    // The capacity bench's step at twice the capacity and back (on unless this is given).
    'no-overload': { type: 'boolean', default: false },
    // How many times the largest held step the overload step opens (2: the target's "twice the capacity").
    'capacity-overload-factor': { type: 'string', default: '2' },
    // The one-file reference's capacity beside Palaver's, for the ratio (on with --full).
    'capacity-reference': { type: 'boolean', default: false },
    // Palaver's capacity and the reference's measured this many times, which goes first alternating.
    'capacity-rounds': { type: 'string', default: '1' },
  },
});
const number = (name: keyof typeof values) => Number(values[name]);
/** The middle value (the mean of the two middle ones for an even count). */
const median = (figures: readonly number[]): number => {
  const sorted = [...figures].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : Math.round((((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2) * 100) / 100;
};

let capacityGrowth: CapacityGrowth[] = [];

interface Shared {
  palaver: BenchPalaver;
  databaseUrl: string;
  baselineUrl: string;
  receiver: { url: string };
}

/**
 * Each benchmark gets the shared servers through `shared()`, which starts them at its first
 * call: a run of benchmarks that start their own (capacity, pipeline, delivery) measures them
 * without an idle Palaver beside them, whose worker polls and whose sweeps run.
 */
const benchmarks: Record<string, (shared: () => Promise<Shared>) => Promise<Metric>> = {
  widget_size: () => benchWidgetSize(),
  ingest_rest: async (shared) => {
    const { palaver, baselineUrl } = await shared();
    return benchIngestRest(palaver, baselineUrl, { messages: number('messages'), concurrency: number('concurrency') });
  },
  ingest_socket: async (shared) => {
    const { palaver, baselineUrl } = await shared();
    return benchIngestSocket(palaver, baselineUrl, { messages: number('messages'), concurrency: number('concurrency') });
  },
  delivery: () => benchDelivery({ deliveries: number('deliveries'), concurrency: 64, users: 1000 }),
  fanout: async (shared) => {
    const { palaver, baselineUrl } = await shared();
    return benchFanout(palaver, baselineUrl, {
      sockets: number('sockets'),
      messages: number('fanout-messages'),
      senders: number('fanout-senders'),
    });
  },
  inbox: async (shared) => {
    const { palaver, databaseUrl } = await shared();
    return benchInbox(palaver, databaseUrl, {
      conversations: number('inbox-conversations'),
      pages: number('inbox-pages'),
      answers: number('inbox-answers'),
    });
  },
  pipeline: () =>
    benchPipeline({
      customers: number('pipeline-customers'),
      roundTrips: number('pipeline-round-trips'),
      modes: (values['pipeline-modes'] === 'both' ? ['postgresql', 'embedded'] : [values['pipeline-modes']]) as PipelineMode[],
    }),
  e2e_latency: async (shared) => {
    const { palaver, receiver } = await shared();
    return benchLatency(palaver, receiver, { rate: number('rate'), messages: number('latency-messages') });
  },
  capacity: async () => {
    if (!(number('capacity-overload-factor') > 1)) throw new Error('--capacity-overload-factor takes a number above 1');
    const steps = (values.full ? '500,1000,2000,3000,4000,5000,6000,8000' : String(values['capacity-steps'])).split(',').map(Number);
    const options = {
      steps,
      stepSeconds: values.full ? 30 : Number(values['capacity-seconds']),
      p99LimitMs: Number(values['capacity-p99']),
      overload: !values['no-overload'],
      overloadFactor: number('capacity-overload-factor'),
      snapshotDir: process.env.BENCH_HEAP_SNAPSHOTS,
    };
    const service = await startHelper('scripts/bench/capacity-service.ts', [], serviceNodeArgs());
    const serviceUrl = `http://127.0.0.1:${service.port}`;
    const run = async (mode: 'postgresql' | 'embedded') => {
      const database = mode === 'postgresql' ? await freshDatabase('capacity') : undefined;
      const dataDir = mode === 'embedded' ? mkdtempSync(path.join(os.tmpdir(), 'palaver-capacity-')) : undefined;
      const inspectPort = await freePort();
      // Production's limits, per device and per address: each conversation comes from an address of its own.
      const palaver = await startPalaver(database?.url ?? '', `${serviceUrl}/hook`, { dataDir, inspectPort, nodeEnv: 'capacity' });
      try {
        await fetch(`${serviceUrl}/configure`, {
          method: 'POST',
          body: JSON.stringify({ palaverUrl: palaver.url, apiKey: palaver.service.apiKey }),
        });
        process.stderr.write(`  (${mode})\n`);
        return await benchCapacity({ ...palaver, serviceUrl }, { ...options, inspectPort, embedded: mode === 'embedded' });
      } finally {
        await palaver.stop();
        await database?.drop();
        if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      }
    };
    const referenceOf = async (mode: 'postgresql' | 'embedded') => {
      process.stderr.write(`  (${mode}, the one-file reference)\n`);
      return referenceCapacity(mode, serviceUrl, options);
    };
    /**
     * Palaver's capacity beside the reference's. The two are measured one after the other, on a
     * host whose speed moves by the quarter hour, so with `--capacity-rounds` the pair is measured
     * again, the reference going first every other round, and the ratio is the rounds' median.
     */
    const withReference = async (mode: 'postgresql' | 'embedded'): Promise<Metric> => {
      if (!values.full && !values['capacity-reference']) return run(mode);
      const count = number('capacity-rounds');
      if (!Number.isInteger(count) || count < 1) throw new Error('--capacity-rounds takes a whole number, 1 or more');
      const rounds: Array<{ ours: Metric; reference: Metric }> = [];
      // Every server's run starts on a settled host (support.ts, settle).
      const settled = async <T>(measure: () => Promise<T>) => {
        await settle(mode === 'postgresql');
        return measure();
      };
      for (let round = 0; round < count; round++) {
        if (round % 2 === 1) {
          const reference = await settled(() => referenceOf(mode));
          rounds.push({ reference, ours: await settled(() => run(mode)) });
        } else {
          const ours = await settled(() => run(mode));
          rounds.push({ ours, reference: await settled(() => referenceOf(mode)) });
        }
      }
      const [first] = rounds as [{ ours: Metric; reference: Metric }];
      // A round whose reference held no step has no ratio (as a single run reports none).
      const ratios = rounds.map((r) => (r.reference.value > 0 ? ratio(r.ours.value, r.reference.value) : undefined));
      const measured = ratios.filter((r): r is number => r !== undefined);
      const result: Metric = {
        ...first.ours,
        baseline: median(rounds.map((r) => r.reference.value)),
        reference: first.reference,
      };
      if (rounds.length === 1) return measured.length > 0 ? { ...result, ratio: measured[0] } : result;
      // The steps, growth and reference's steps are the first round's; the figures, every round's median.
      return {
        ...result,
        value: median(rounds.map((r) => r.ours.value)),
        ...(measured.length > 0 ? { ratio: median(measured) } : {}),
        rounds: rounds.map((r, i) => ({
          reference_first: i % 2 === 1,
          palaver: r.ours.value,
          reference: r.reference.value,
          ...(ratios[i] === undefined ? {} : { ratio: ratios[i] }),
        })),
      };
    };
    const modes = values.full || values['capacity-modes'] === 'both' ? ['postgresql', 'embedded'] : [String(values['capacity-modes'])];
    try {
      const [first, ...others] = modes as Array<'postgresql' | 'embedded'>;
      if (!first) throw new Error('no capacity mode');
      const result: Metric = { ...(await withReference(first)), mode: first };
      for (const mode of others) result[mode] = await withReference(mode);
      capacityGrowth = result.growth as CapacityGrowth[];
      return result;
    } finally {
      service.stop();
    }
  },
  nodes: () =>
    benchNodes({
      // "3" is three nodes; "1+1" one node and one listener (a node that takes no traffic).
      nodeCounts: String(values['nodes-counts'])
        .split(',')
        .map((run) => ({ serving: Number(run.split('+')[0]), listening: Number(run.split('+')[1] ?? 0) })),
      conversations: number('nodes-conversations'),
      rate: number('nodes-rate'),
      seconds: number('nodes-seconds'),
    }),
  // The RSS each busy conversation adds, from the capacity steps (run it with capacity).
  rss_per_conversation: () => {
    const [first, ...more] = capacityGrowth;
    if (!first) throw new Error('rss_per_conversation comes from the capacity steps: run capacity with two steps or more');
    // The first pair of steps: later steps may be past the knee, where queues (not conversations) grow.
    // The RSS's mean over each step's window, not the instant the step ends: that instant falls
    // anywhere on V8's sawtooth (at 1,000 conversations 299 MB at the end, 444 MB at the peak).
    return Promise.resolve({
      value: first.rss_mean_bytes,
      unit: `bytes RSS per busy conversation (${first.from} → ${first.to}, mean over each step)`,
      rss_end_bytes: first.rss_bytes,
      rss_peak_bytes: first.rss_peak_bytes,
      // Embedded: the database's WebAssembly memory, within rss_end_bytes (its buffers fill with the data).
      wasm_rss_bytes: first.wasm_rss_bytes,
      heap_bytes: first.heap_bytes,
      rss_after_gc_bytes: first.rss_after_gc_bytes,
      later: more,
    });
  },
  // Processes of their own, each with its inspector: no garbage from the other benchmarks in
  // the heap figures, which are read after a full collection.
  connections: async (shared) => {
    const { databaseUrl, receiver } = await shared();
    const [palaverInspect, baselineInspect] = [await freePort(), await freePort()];
    const fresh = await startPalaver(databaseUrl, `${receiver.url}/hook`, { inspectPort: palaverInspect });
    const bare = await startHelper('scripts/bench/baseline-server.ts', [databaseUrl], [`--inspect=127.0.0.1:${baselineInspect}`]);
    try {
      return await benchConnections(
        { ...fresh, inspectPort: palaverInspect },
        { url: `http://127.0.0.1:${bare.port}`, inspectPort: baselineInspect },
        number('connections'),
      );
    } finally {
      bare.stop();
      await fresh.stop();
    }
  },
};

const selected = values.only?.length ? values.only : Object.keys(benchmarks);
for (const name of selected) {
  if (!benchmarks[name]) throw new Error(`unknown benchmark ${name}; known: ${Object.keys(benchmarks).join(', ')}`);
}
process.stderr.write(
  `Palaver benchmarks on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}\n`,
);

/** The shared servers, once started, and how to stop them. */
let started: { shared: Shared; stop: () => Promise<void> } | undefined;
const shared = async (): Promise<Shared> => {
  if (!started) {
    // The Service's webhook endpoint, in a process of its own (as a Service is): the load
    // generator's process does not receive the webhooks its messages cause.
    const receiverProcess = await startHelper('scripts/bench/receiver.ts');
    const receiver = { url: `http://127.0.0.1:${receiverProcess.port}` };
    const database = await freshDatabase('main');
    const baseline = await startHelper('scripts/bench/baseline-server.ts', [database.url]);
    const palaver = await startPalaver(database.url, `${receiver.url}/hook`);
    started = {
      shared: { palaver, databaseUrl: database.url, baselineUrl: `http://127.0.0.1:${baseline.port}`, receiver },
      stop: async () => {
        await palaver.stop();
        baseline.stop();
        receiverProcess.stop();
        await database.drop();
      },
    };
  }
  return started.shared;
};
const results: Record<string, Metric> = {};
try {
  for (const name of selected) {
    process.stderr.write(`\n${name}\n`);
    const run = benchmarks[name];
    if (run) results[name] = await run(shared);
    // The next benchmark starts on a quiet server: webhooks queued by this one are sent first.
    if (started) await drained(started.shared.palaver.url);
  }
} finally {
  await started?.stop();
}

const cell = (m: Metric, key: 'value' | 'baseline') => (m[key] === undefined ? '' : `${m[key]} ${m.unit}`);
const rows = Object.entries(results).map(([name, m]) => [
  name,
  cell(m, 'value'),
  cell(m, 'baseline'),
  m.ratio === undefined ? '' : String(m.ratio),
]);
const header = ['metric', 'palaver', 'baseline', 'ratio'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
process.stdout.write(`\n${line(header)}\n${line(widths.map((w) => '-'.repeat(w)))}\n${rows.map(line).join('\n')}\n`);
process.stdout.write(`\nwritten to ${writeResults(results)}\n`);
process.exit(0);
