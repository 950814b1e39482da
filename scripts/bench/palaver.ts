// Palaver as the benchmarks measure it: `src/main.ts` in a process of its own on the machine's
// PostgreSQL (config/bench.json: no write limits), with an account, a Service whose webhook is
// the given receiver, and registered devices, all made through the public APIs.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { forwardStderr, freePort, ROOT } from './support.ts';

export const ADMIN = { email: 'bench@palaver.local', password: 'benchmark password' };

export interface BenchPalaver extends BenchNode {
  account: { id: number; identification: string };
  service: { id: number; apiKey: string };
}

async function call<T>(url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as { data: T };
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json)}`);
  return json.data;
}

/**
 * The V8 flags `npm start` and the Docker image start Palaver with (package.json, Dockerfile):
 * the benchmarks measure the node as it runs. Why this heap limit: docs/performance.md,
 * Memory per busy conversation.
 */
export const NODE_FLAGS = ['--max-old-space-size=1024'];

/** One Palaver process, without the account and Service a benchmark makes (see startPalaver). */
export interface BenchNode {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `src/main.ts` and waits until it is ready. With `databaseUrl` empty, Palaver runs on its
 * embedded database in `dataDir`; with `redisUrl`, nodes on one database share notices and
 * Socket.IO broadcasts through that Redis (start the first alone: it migrates the database).
 */
export async function startNode(
  databaseUrl: string,
  options: { inspectPort?: number; dataDir?: string; redisUrl?: string; nodeEnv?: string } = {},
): Promise<BenchNode> {
  const port = await freePort();
  // BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=prof" profiles the measured server (not allowed in NODE_OPTIONS);
  // given after the product's own flags, a V8 flag there overrides them (--max-old-space-size=0: V8's default).
  const nodeArgs = [...NODE_FLAGS, ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  if (options.inspectPort) nodeArgs.push(`--inspect=127.0.0.1:${options.inspectPort}`);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      // `bench` (config/bench.json): no write limits, so that a benchmark measures the path, not
      // the limits; `capacity` (config/capacity.json): every limit as in production.
      NODE_ENV: options.nodeEnv ?? 'bench',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      ...(options.dataDir ? { PALAVER_DATA_DIR: options.dataDir } : {}),
      ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
      PALAVER_ADMIN_EMAIL: ADMIN.email,
      PALAVER_ADMIN_PASSWORD: ADMIN.password,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  forwardStderr(child);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error('palaver exited during start');
    const up = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 600) throw new Error('palaver did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A node (startNode) with an account and a Service whose webhook is `webhookUrl`, made through the Admin API. */
export async function startPalaver(
  databaseUrl: string,
  webhookUrl: string,
  options: { inspectPort?: number; dataDir?: string; redisUrl?: string; nodeEnv?: string } = {},
): Promise<BenchPalaver> {
  const node = await startNode(databaseUrl, options);
  const { url } = node;
  const { token } = await call<{ token: string }>(`${url}/adminApi/login`, 'POST', ADMIN);
  const auth = { authorization: `Bearer ${token}` };
  const account = await call<{ id: number; identification: string }>(`${url}/adminApi/accounts`, 'POST', { name: 'Bench' }, auth);
  const service = await call<{ id: number; apiKey: string }>(
    `${url}/adminApi/accounts/${account.id}/services`,
    'POST',
    { name: 'Receiver', webhookUrl },
    auth,
  );
  return { ...node, account, service };
}

/** Registers `count` anonymous devices; returns their identification headers and user ids. */
export async function registerDevices(palaver: BenchPalaver, count: number, label: string) {
  const devices: Array<{ identification: string; userId: number }> = [];
  for (let i = 0; i < count; i++) {
    const identification = `${palaver.account.identification}:bench-${label}-${i.toString().padStart(6, '0')}`;
    const { userId } = await call<{ userId: number }>(`${palaver.url}/devices`, 'POST', {}, { 'x-iris-identification': identification });
    devices.push({ identification, userId });
  }
  return devices;
}

export async function serviceCall<T = unknown>(palaver: BenchPalaver, method: string, path: string, body: unknown): Promise<T> {
  return call<T>(`${palaver.url}${path}`, method, body, { authorization: `Bearer ${palaver.service.apiKey}` });
}

/**
 * Palaver's /metrics text. Read once more when the connection fails before any answer: under
 * load the loader may reuse a kept-alive connection in the instant the server closes it as idle
 * (undici: "other side closed"); a server that is down fails the second read too.
 */
export async function metricsText(url: string): Promise<string> {
  const read = async () => (await fetch(`${url}/metrics`)).text();
  try {
    return await read();
  } catch {
    return read();
  }
}

export async function metricsOf(url: string): Promise<Record<string, number>> {
  const text = await metricsText(url);
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^(palaver_[a-z_]+)(?:\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (match?.[1] && match[2] && !(match[1] in out)) out[match[1]] = Number(match[2]);
  }
  return out;
}

/**
 * Waits until the outbox is empty: webhooks caused so far are sent. Gives up after two minutes,
 * or when nothing has been sent for five seconds (a run with PALAVER_DELIVERY_WORKER=false).
 */
export async function drained(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  let last = Infinity;
  let movedAt = Date.now();
  for (;;) {
    const pending = (await metricsOf(url)).palaver_deliveries_pending ?? 0;
    if (pending === 0 || Date.now() > deadline) return;
    if (pending < last) movedAt = Date.now();
    else if (Date.now() - movedAt > 5000) return;
    last = pending;
    await new Promise((r) => setTimeout(r, 200));
  }
}
