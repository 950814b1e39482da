// `ingest_rest` and `ingest_socket`: messages accepted per second (committed, delivery queued),
// against a minimal Koa route / bare Socket.IO handler doing one plain INSERT into the same
// PostgreSQL, with the same load generator and concurrency.
import { io, type Socket } from 'socket.io-client';
import { runLoad, type LoadResult } from './load.ts';
import { drained, registerDevices, type BenchPalaver } from './palaver.ts';
import { progress, ratio, type Metric } from './support.ts';

export interface IngestOptions {
  messages: number;
  concurrency: number;
}

/** The baseline measured before and after Palaver (the machine is shared): their mean rate, the later percentiles. */
function bracket(before: LoadResult, after: LoadResult): LoadResult {
  return { ...after, rate: (before.rate + after.rate) / 2, errors: before.errors + after.errors };
}

type Run = (total?: number) => Promise<LoadResult>;

/**
 * One comparison, the same for both transports. Both sides first run a fifth of the load, not
 * measured (neither is timed while its code is still being compiled); the baseline runs before
 * and after Palaver (see bracket());
 * Palaver's outbox is drained around its run, so no backlog is sent during a measurement.
 */
async function compare(
  palaver: BenchPalaver,
  options: IngestOptions,
  labels: { bare: string; palaver: string },
  bareRun: Run,
  palaverRun: Run,
): Promise<Metric> {
  const warmUp = Math.ceil(options.messages / 5);
  await bareRun(warmUp);
  await palaverRun(warmUp);
  await drained(palaver.url);
  progress(`baseline: ${labels.bare}, ${options.messages} messages at concurrency ${options.concurrency}`);
  const before = await bareRun();
  progress(`palaver: ${labels.palaver}`);
  const measured = await palaverRun();
  await drained(palaver.url);
  progress('baseline again (the two runs bracket Palaver)');
  return metric(measured, bracket(before, await bareRun()), options);
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
  const bareRun: Run = (total = options.messages) =>
    runLoad({ ...options, total, request: (_, i) => post(`${baselineUrl}/messages`, {}, body(i)) });
  const palaverRun: Run = (total = options.messages) =>
    runLoad({
      ...options,
      total,
      request: (worker, i) => post(`${palaver.url}/messages`, { 'x-iris-identification': devices[worker]?.identification ?? '' }, body(i)),
    });
  return compare(palaver, options, { bare: 'Koa + one INSERT', palaver: 'POST /messages' }, bareRun, palaverRun);
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
  const ours = await connectAll(
    palaver.url,
    devices.map((d) => ({ identification: d.identification })),
  );
  const bare = await connectAll(
    baselineUrl,
    devices.map(() => ({})),
  );
  const emit = async (socket: Socket | undefined, i: number) => {
    const answer = (await socket?.timeout(30_000).emitWithAck('message', { message: `Benchmark message ${i}` })) as
      { status?: string } | undefined;
    return answer?.status !== 'ERROR';
  };
  try {
    const bareRun: Run = (total = options.messages) => runLoad({ ...options, total, request: (worker, i) => emit(bare[worker], i) });
    const palaverRun: Run = (total = options.messages) => runLoad({ ...options, total, request: (worker, i) => emit(ours[worker], i) });
    return await compare(
      palaver,
      options,
      { bare: 'bare Socket.IO handler + one INSERT', palaver: 'socket message with acknowledgement' },
      bareRun,
      palaverRun,
    );
  } finally {
    for (const socket of [...ours, ...bare]) socket.disconnect();
  }
}
