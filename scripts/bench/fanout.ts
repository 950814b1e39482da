// `fanout`: agent messages per second reaching N connected sockets (one conversation open on N
// sockets), against a bare Socket.IO server emitting to the same number of sockets, each
// message triggered by one HTTP request in both cases.
import type { Socket } from 'socket.io-client';
import { registerDevices, serviceCall, type BenchPalaver } from './palaver.ts';
import { closeSockets, openSockets } from './sockets.ts';
import { progress, ratio, type Metric } from './support.ts';

export interface FanoutOptions {
  sockets: number;
  messages: number;
}

async function measure(sockets: Socket[], total: number, send: (i: number) => Promise<void>): Promise<number> {
  let received = 0;
  const done = new Promise<void>((resolve) => {
    for (const socket of sockets) {
      socket.on('message', () => {
        received += 1;
        if (received === total) resolve();
      });
    }
  });
  const started = process.hrtime.bigint();
  const messages = total / sockets.length;
  for (let i = 0; i < messages; i++) await send(i);
  await done;
  return total / (Number(process.hrtime.bigint() - started) / 1e9);
}

export async function benchFanout(palaver: BenchPalaver, baselineUrl: string, options: FanoutOptions): Promise<Metric> {
  const total = options.sockets * options.messages;
  const [device] = await registerDevices(palaver, 1, 'fanout');
  if (!device) throw new Error('no device');
  progress(`baseline: bare Socket.IO, ${options.messages} messages to ${options.sockets} sockets`);
  const bare = await openSockets(baselineUrl, options.sockets, {});
  const baseline = await measure(bare, total, async () => {
    await (await fetch(`${baselineUrl}/fanout?count=1`, { method: 'POST' })).arrayBuffer();
  });
  closeSockets(bare);

  progress(`palaver: ${options.messages} agent messages (Service API) to one conversation open on ${options.sockets} sockets`);
  const ours = await openSockets(palaver.url, options.sockets, { identification: device.identification });
  const value = await measure(ours, total, (i) =>
    serviceCall(palaver, 'POST', `/users/${device.userId}/messages`, { message: `fan-out ${i}`, agent: { id: 1, name: 'Bench' } }),
  );
  closeSockets(ours);
  return {
    value: Math.round(value),
    unit: 'socket messages/s',
    baseline: Math.round(baseline),
    ratio: ratio(value, baseline),
    sockets: options.sockets,
    messages: options.messages,
  };
}
