// `e2e_latency`: a socket `message` emitted → its webhook received by the Service, at a fixed
// rate, p50 and p99; against a bare HTTP round trip to the same receiver at the same rate.
import { percentile } from './load.ts';
import { registerDevices, type BenchPalaver } from './palaver.ts';
import { closeSockets, openSockets } from './sockets.ts';
import { progress, ratio, type Metric } from './support.ts';

export interface LatencyOptions {
  rate: number;
  messages: number;
}

/** When the receiver (receiver.ts, its own process) took each "e2e N" webhook, on the shared monotonic clock. */
async function arrivals(receiverUrl: string): Promise<Map<number, bigint>> {
  const seen = (await (await fetch(`${receiverUrl}/arrivals`)).json()) as Record<string, string>;
  return new Map(Object.entries(seen).map(([i, at]) => [Number(i), BigInt(at)]));
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchLatency(palaver: BenchPalaver, receiver: { url: string }, options: LatencyOptions): Promise<Metric> {
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
  await fetch(`${receiver.url}/arrivals`, { method: 'DELETE' });
  for (let i = 0; i < options.messages; i++) {
    sent.set(i, process.hrtime.bigint());
    socket?.emit('message', { message: `e2e ${i}` });
    await tick(interval);
  }
  const deadline = Date.now() + 30_000;
  let arrived = await arrivals(receiver.url);
  while (arrived.size < options.messages && Date.now() < deadline) {
    await tick(100);
    arrived = await arrivals(receiver.url);
  }
  closeSockets(socket ? [socket] : []);
  const latencies = [...sent].flatMap(([i, t0]) => {
    const t1 = arrived.get(i);
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
