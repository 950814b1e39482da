// `fanout`: agent messages per second reaching N connected sockets (one conversation open on N
// sockets), against a bare Socket.IO server emitting the same message to the same number of
// sockets, each message triggered by one HTTP request in both cases.
import type { Socket } from 'socket.io-client';
import { runLoad } from './load.ts';
import { registerDevices, serviceCall, type BenchPalaver } from './palaver.ts';
import { closeSockets, openSockets } from './sockets.ts';
import { progress, ratio, type Metric } from './support.ts';

export interface FanoutOptions {
  sockets: number;
  messages: number;
  /** Messages sent at once (each an HTTP request), so that sending never waits on one request's latency. */
  senders: number;
}

async function measure(sockets: Socket[], total: number, senders: number, send: (i: number) => Promise<void>): Promise<number> {
  // Idle sockets are measured, not connections still settling (Palaver reads each new
  // socket's catch-up from PostgreSQL right after its handshake).
  await new Promise((resolve) => setTimeout(resolve, 1000));
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
  await runLoad({
    concurrency: senders,
    total: total / sockets.length,
    request: async (_, i) => {
      await send(i);
      return true;
    },
  });
  await done;
  return total / (Number(process.hrtime.bigint() - started) / 1e9);
}

export async function benchFanout(palaver: BenchPalaver, baselineUrl: string, options: FanoutOptions): Promise<Metric> {
  const [device] = await registerDevices(palaver, 1, 'fanout');
  if (!device) throw new Error('no device');
  const agentMessage = (i: number) => ({ message: `fan-out ${i}`, agent: { id: 1, name: 'Bench' } });
  // The Service API answers with the message as sockets receive it: the baseline emits that.
  const pushed = await serviceCall(palaver, 'POST', `/users/${device.userId}/messages`, agentMessage(0));
  const bareRun = async (messages = options.messages) => {
    const bare = await openSockets(baselineUrl, options.sockets, {});
    try {
      return await measure(bare, options.sockets * messages, options.senders, async () => {
        await (await fetch(`${baselineUrl}/fanout?count=1`, { method: 'POST', body: JSON.stringify(pushed) })).arrayBuffer();
      });
    } finally {
      closeSockets(bare);
    }
  };
  const palaverRun = async (messages = options.messages) => {
    const ours = await openSockets(palaver.url, options.sockets, { identification: device.identification });
    try {
      return await measure(ours, options.sockets * messages, options.senders, async (i) => {
        await serviceCall(palaver, 'POST', `/users/${device.userId}/messages`, agentMessage(i + 1));
      });
    } finally {
      closeSockets(ours);
    }
  };
  // Warm-up, not measured: neither side is timed while its code is still being compiled.
  const warmUp = Math.ceil(options.messages / 5);
  await bareRun(warmUp);
  await palaverRun(warmUp);

  progress(`baseline: bare Socket.IO, ${options.messages} messages to ${options.sockets} sockets`);
  const before = await bareRun();
  progress(`palaver: ${options.messages} agent messages (Service API) to one conversation open on ${options.sockets} sockets`);
  const value = await palaverRun();
  progress('baseline again (the machine is shared: the two runs bracket Palaver)');
  const baseline = (before + (await bareRun())) / 2;
  return {
    value: Math.round(value),
    unit: 'socket messages/s',
    baseline: Math.round(baseline),
    ratio: ratio(value, baseline),
    sockets: options.sockets,
    messages: options.messages,
    senders: options.senders,
  };
}
