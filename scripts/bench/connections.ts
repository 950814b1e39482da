// `connections`: heap and RSS of the Palaver process per idle connected socket, at N sockets.
import { metricsOf, registerDevices, type BenchPalaver } from './palaver.ts';
import { closeSockets, openSockets } from './sockets.ts';
import { progress, ratio, type Metric } from './support.ts';

/**
 * The least heap and RSS seen over a few seconds: a reading right after the handshakes counts
 * their garbage, which the next collections remove.
 */
async function settled(read: () => Promise<{ heap: number; rss: number }>, seconds = 8): Promise<{ heap: number; rss: number }> {
  let heap = Infinity;
  let rss = Infinity;
  for (let i = 0; i < seconds * 2; i++) {
    const m = await read();
    heap = Math.min(heap, m.heap);
    rss = Math.min(rss, m.rss);
    await new Promise((r) => setTimeout(r, 500));
  }
  return { heap, rss };
}

const palaverMemory = (url: string) => async () => {
  const m = await metricsOf(url);
  return { heap: m.palaver_nodejs_heap_size_used_bytes ?? 0, rss: m.palaver_process_resident_memory_bytes ?? 0 };
};

const bareMemory = (url: string) => async () => (await (await fetch(`${url}/memory`)).json()) as { heap: number; rss: number };

/** Heap and RSS per socket of `count` idle sockets on a server. */
async function perSocket(url: string, count: number, auth: Record<string, unknown>, read: () => Promise<{ heap: number; rss: number }>) {
  const before = await settled(read);
  const sockets = await openSockets(url, count, auth);
  if (sockets.length < count) progress(`only ${sockets.length} of ${count} sockets connected`);
  const after = await settled(read);
  closeSockets(sockets);
  const connected = Math.max(sockets.length, 1);
  return { heap: (after.heap - before.heap) / connected, rss: (after.rss - before.rss) / connected, connected: sockets.length };
}

export async function benchConnections(palaver: BenchPalaver, baselineUrl: string, count: number): Promise<Metric> {
  const [device] = await registerDevices(palaver, 1, 'idle');
  progress(`baseline: ${count} idle sockets on a bare Socket.IO server`);
  const bare = await perSocket(baselineUrl, count, {}, bareMemory(baselineUrl));
  progress(`palaver: ${count} idle sockets`);
  const ours = await perSocket(palaver.url, count, { identification: device?.identification }, palaverMemory(palaver.url));
  return {
    value: Math.round(ours.heap),
    unit: 'bytes heap per idle socket',
    baseline: Math.round(bare.heap),
    ratio: ratio(ours.heap, bare.heap),
    rss_per_socket_bytes: Math.round(ours.rss),
    baseline_rss_per_socket_bytes: Math.round(bare.rss),
    sockets: count,
    connected: ours.connected,
  };
}
