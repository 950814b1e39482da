// `npm run bench [-- --only delivery --deliveries 20000 --concurrency 64]`: runs the
// benchmarks, each beside its baseline in the same run, prints a table and writes
// bench-results.json. Needs the machine's PostgreSQL (BENCH_DATABASE_URL to point elsewhere).
import os from 'node:os';
import { parseArgs } from 'node:util';
import { benchDelivery } from './delivery.ts';
import { writeResults, type Metric } from './support.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string', multiple: true },
    deliveries: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '64' },
  },
});

const benchmarks: Record<string, () => Promise<Metric>> = {
  delivery: () =>
    benchDelivery({
      deliveries: Number(values.deliveries),
      concurrency: Number(values.concurrency),
      users: 1000,
    }),
};

const selected = values.only?.length ? values.only : Object.keys(benchmarks);
const results: Record<string, Metric> = {};
process.stderr.write(`Palaver benchmarks on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, node ${process.version}\n`);
for (const name of selected) {
  const run = benchmarks[name];
  if (!run) throw new Error(`unknown benchmark ${name}; known: ${Object.keys(benchmarks).join(', ')}`);
  process.stderr.write(`\n${name}\n`);
  results[name] = await run();
}

const rows = Object.entries(results).map(([name, m]) => [
  name,
  `${m.value} ${m.unit}`,
  m.baseline === undefined ? '' : `${m.baseline} ${m.unit}`,
  m.ratio === undefined ? '' : String(m.ratio),
]);
const header = ['metric', 'palaver', 'baseline', 'ratio'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
process.stdout.write(`\n${line(header)}\n${line(widths.map((w) => '-'.repeat(w)))}\n${rows.map(line).join('\n')}\n`);
process.stdout.write(`\nwritten to ${writeResults(results)}\n`);
