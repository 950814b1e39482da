// A closed-loop load generator: `concurrency` workers, each starting its next request when the
// previous one answered, until `total` requests. Reports throughput and latency percentiles.
export interface LoadResult {
  rate: number;
  p50: number;
  p99: number;
  errors: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export async function runLoad(options: {
  concurrency: number;
  total: number;
  request: (worker: number, index: number) => Promise<boolean>;
}): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, worker) => {
      while (next < options.total) {
        const index = next++;
        const t0 = process.hrtime.bigint();
        const ok = await options.request(worker, index).catch(() => false);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (!ok) errors++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  return {
    rate: options.total / seconds,
    p50: Math.round(percentile(latencies, 50) * 100) / 100,
    p99: Math.round(percentile(latencies, 99) * 100) / 100,
    errors,
  };
}
