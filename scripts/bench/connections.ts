// `connections`: heap and RSS of the Palaver process per idle connected socket, at N sockets.
import { metricsOf, registerDevices, type BenchPalaver } from './palaver.ts';
import { closeSockets, openSockets } from './sockets.ts';
import { progress, type Metric } from './support.ts';

export async function benchConnections(palaver: BenchPalaver, count: number): Promise<Metric> {
  const [device] = await registerDevices(palaver, 1, 'idle');
  await new Promise((r) => setTimeout(r, 1000));
  const before = await metricsOf(palaver.url);
  progress(`palaver: ${count} idle sockets`);
  const sockets = await openSockets(palaver.url, count, { identification: device?.identification });
  // Let connection bursts settle (and young garbage go) before reading.
  await new Promise((r) => setTimeout(r, 3000));
  const after = await metricsOf(palaver.url);
  closeSockets(sockets);
  const heap = ((after.palaver_nodejs_heap_size_used_bytes ?? 0) - (before.palaver_nodejs_heap_size_used_bytes ?? 0)) / count;
  const rss = ((after.palaver_process_resident_memory_bytes ?? 0) - (before.palaver_process_resident_memory_bytes ?? 0)) / count;
  return {
    value: Math.round(heap),
    unit: 'bytes heap per idle socket',
    rss_per_socket_bytes: Math.round(rss),
    sockets: count,
    connected: sockets.length,
  };
}
