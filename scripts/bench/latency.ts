// `e2e_latency`: a socket `message` emitted → its webhook received by the Service, at a fixed
// rate, p50 and p99; against a bare HTTP round trip to the same receiver at the same rate.
import type { Server } from 'node:http';
import { percentile } from './load.ts';
import { registerDevices, type BenchPalaver } from './palaver.ts';
import { closeSockets, openSockets } from './sockets.ts';
import { progress, ratio, type Metric } from './support.ts';

export interface LatencyOptions {
  rate: number;
  messages: number;
}

/** Webhook arrivals are reported here by the benchmark's receiver (same process, same clock). */
export const arrivals = new Map<number, bigint>();

export function onWebhook(body: string): void {
  const match = /"message":"e2e (\d+)"/.exec(body);
  if (match?.[1]) arrivals.set(Number(match[1]), process.hrtime.bigint());
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchLatency(
  palaver: BenchPalaver,
  receiver: { url: string; server: Server },
  options: LatencyOptions,
): Promise<Metric> {
  const interval = 1000 / options.rate;
  progress(`baseline: bare HTTP round trips to the receiver, ${options.messages} at ${options.rate}/s`);
  const roundTrips: number[] = [];
  for (let i = 0; i < options.messages; i++) {
    const t0 = process.hrtime.bigint();
    await (await fetch(`${receiver.url}/ping`, { method: 'POST', body: '{}' })).arrayBuffer();
    roundTrips.push(Number(process.hrtime.bigint() - t0) / 1e6);
    await tick(interval);
  }

  progress(`palaver: socket message → webhook, ${options.messages} at ${options.rate}/s`);
  const [device] = await registerDevices(palaver, 1, 'latency');
  const [socket] = await openSockets(palaver.url, 1, { identification: device?.identification });
  const sent = new Map<number, bigint>();
  arrivals.clear();
  for (let i = 0; i < options.messages; i++) {
    sent.set(i, process.hrtime.bigint());
    socket?.emit('message', { message: `e2e ${i}` });
    await tick(interval);
  }
  const deadline = Date.now() + 30_000;
  while (arrivals.size < options.messages && Date.now() < deadline) await tick(50);
  closeSockets(socket ? [socket] : []);
  const latencies = [...sent].flatMap(([i, t0]) => {
    const t1 = arrivals.get(i);
    return t1 ? [Number(t1 - t0) / 1e6] : [];
  });
  latencies.sort((a, b) => a - b);
  roundTrips.sort((a, b) => a - b);
  const p50 = percentile(latencies, 50);
  const baseline = percentile(roundTrips, 50);
  return {
    value: Math.round(p50 * 100) / 100,
    unit: 'ms (p50)',
    baseline: Math.round(baseline * 100) / 100,
    ratio: ratio(p50, baseline),
    p99_ms: Math.round(percentile(latencies, 99) * 100) / 100,
    baseline_p99_ms: Math.round(percentile(roundTrips, 99) * 100) / 100,
    received: latencies.length,
    messages: options.messages,
    rate_per_s: options.rate,
  };
}
