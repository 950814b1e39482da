// `connections`: heap and RSS per idle connected socket at N sockets, of a Palaver process and
// of a bare Socket.IO server, each read after a full garbage collection (see inspector.ts).
import { memoryAfterGc } from './inspector.ts';
import { registerDevices, type BenchPalaver } from './palaver.ts';
import { closeSockets, openSockets } from './sockets.ts';
import { progress, ratio, type Metric } from './support.ts';

/** Heap and RSS per socket of `count` idle sockets on the server whose inspector is on `inspectPort`. */
async function perSocket(url: string, inspectPort: number, count: number, auth: Record<string, unknown>) {
  // A first wave, closed again, so that code compiled for handshakes is not counted per socket.
  closeSockets(await openSockets(url, Math.min(count, 500), auth));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const before = await memoryAfterGc(inspectPort);
  const sockets = await openSockets(url, count, auth);
  if (sockets.length < count) progress(`only ${sockets.length} of ${count} sockets connected`);
  // Idle: the handshakes' work (and Palaver's catch-up reads) done.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const after = await memoryAfterGc(inspectPort);
  closeSockets(sockets);
  const connected = Math.max(sockets.length, 1);
  return { heap: (after.heap - before.heap) / connected, rss: (after.rss - before.rss) / connected, connected: sockets.length };
}

export interface Inspected {
  url: string;
  inspectPort: number;
}

export async function benchConnections(
  palaver: BenchPalaver & { inspectPort: number },
  baseline: Inspected,
  count: number,
): Promise<Metric> {
  const [device] = await registerDevices(palaver, 1, 'idle');
  progress(`baseline: ${count} idle sockets on a bare Socket.IO server`);
  const bare = await perSocket(baseline.url, baseline.inspectPort, count, {});
  progress(`palaver: ${count} idle sockets`);
  const ours = await perSocket(palaver.url, palaver.inspectPort, count, { identification: device?.identification });
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
