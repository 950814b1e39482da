// `ingest_rest` and `ingest_socket`: messages accepted per second (committed, delivery queued),
// against a minimal Koa route / bare Socket.IO handler doing one plain INSERT into the same
// PostgreSQL, with the same load generator and concurrency.
import { io, type Socket } from 'socket.io-client';
import { runLoad, type LoadResult } from './load.ts';
import { registerDevices, type BenchPalaver } from './palaver.ts';
import { progress, ratio, type Metric } from './support.ts';

export interface IngestOptions {
  messages: number;
  concurrency: number;
}

function metric(palaver: LoadResult, baseline: LoadResult, options: IngestOptions): Metric {
  return {
    value: Math.round(palaver.rate),
    unit: 'messages/s',
    baseline: Math.round(baseline.rate),
    ratio: ratio(palaver.rate, baseline.rate),
    p50_ms: palaver.p50,
    p99_ms: palaver.p99,
    baseline_p50_ms: baseline.p50,
    baseline_p99_ms: baseline.p99,
    errors: palaver.errors + baseline.errors,
    concurrency: options.concurrency,
    messages: options.messages,
  };
}

const post = async (url: string, headers: Record<string, string>, body: string) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  await response.arrayBuffer();
  return response.ok;
};

export async function benchIngestRest(palaver: BenchPalaver, baselineUrl: string, options: IngestOptions): Promise<Metric> {
  const devices = await registerDevices(palaver, options.concurrency, 'rest');
  const body = (i: number) => JSON.stringify({ message: `Benchmark message ${i}: where is my order?` });
  progress(`baseline: Koa + one INSERT, ${options.messages} requests at concurrency ${options.concurrency}`);
  const baseline = await runLoad({ ...options, total: options.messages, request: (_, i) => post(`${baselineUrl}/messages`, {}, body(i)) });
  progress('palaver: POST /messages');
  const measured = await runLoad({
    ...options,
    total: options.messages,
    request: (worker, i) => post(`${palaver.url}/messages`, { 'x-iris-identification': devices[worker]?.identification ?? '' }, body(i)),
  });
  return metric(measured, baseline, options);
}

async function connectAll(url: string, auths: Array<Record<string, unknown>>): Promise<Socket[]> {
  return Promise.all(
    auths.map(
      (auth) =>
        new Promise<Socket>((resolve, reject) => {
          const socket = io(url, { path: '/socket.io', transports: ['websocket'], reconnection: false, auth });
          socket.once('connect', () => resolve(socket));
          socket.once('connect_error', reject);
        }),
    ),
  );
}

export async function benchIngestSocket(palaver: BenchPalaver, baselineUrl: string, options: IngestOptions): Promise<Metric> {
  const devices = await registerDevices(palaver, options.concurrency, 'socket');
  const ours = await connectAll(palaver.url, devices.map((d) => ({ identification: d.identification })));
  const bare = await connectAll(baselineUrl, devices.map(() => ({})));
  const emit = async (socket: Socket | undefined, i: number) => {
    const answer = (await socket?.timeout(30_000).emitWithAck('message', { message: `Benchmark message ${i}` })) as { status?: string } | undefined;
    return answer?.status !== 'ERROR';
  };
  try {
    progress(`baseline: bare Socket.IO handler + one INSERT, ${options.messages} messages at concurrency ${options.concurrency}`);
    const baseline = await runLoad({ ...options, total: options.messages, request: (worker, i) => emit(bare[worker], i) });
    progress('palaver: socket message with acknowledgement');
    const measured = await runLoad({ ...options, total: options.messages, request: (worker, i) => emit(ours[worker], i) });
    return metric(measured, baseline, options);
  } finally {
    for (const socket of [...ours, ...bare]) socket.disconnect();
  }
}
