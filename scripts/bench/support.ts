// Shared pieces of the benchmarks: a fresh PostgreSQL database, helper processes, progress
// lines, and the results file.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const DATABASE_SERVER = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface Metric {
  value: number;
  unit: string;
  baseline?: number;
  ratio?: number;
  [detail: string]: unknown;
}

export function progress(message: string): void {
  process.stderr.write(`  … ${message}\n`);
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_SERVER });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh database on the benchmark PostgreSQL server; drop() removes it. */
export async function freshDatabase(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `palaver_bench_${label}_${process.pid}`;
  await admin(`drop database if exists "${name}" with (force)`);
  await admin(`create database "${name}"`);
  const url = new URL(DATABASE_SERVER);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists "${name}" with (force)`) };
}

/**
 * Node's flags for the Service the capacity, pipeline and nodes benchmarks answer with
 * (capacity-service.ts): `BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=prof"` profiles it,
 * to tell whether the bench's own Service, sharing the cores, is what holds the answers back.
 */
export function serviceNodeArgs(): string[] {
  return process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
}

/** Starts a TypeScript helper process that prints one line (its port) when ready. */
export function startHelper(
  script: string,
  args: string[] = [],
  nodeArgs: string[] = [],
): Promise<{ port: number; child: ChildProcess; stop(): void }> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, script), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  forwardStderr(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.stdout?.once('data', (chunk: Buffer) => {
      resolve({ port: Number(chunk.toString().trim()), child, stop: () => child.kill('SIGTERM') });
    });
  });
}

/** The child's stderr on ours, but for the inspector's banner (see inspector.ts). */
export function forwardStderr(child: ChildProcess): void {
  child.stderr?.on('data', (chunk: Buffer) => {
    const lines = chunk
      .toString()
      .split('\n')
      .filter(
        (line) =>
          line !== '' &&
          !/^(Debugger listening on|Debugger ending on|For help, see:|Debugger attached|Waiting for the debugger)/.test(line),
      );
    if (lines.length > 0) process.stderr.write(`${lines.join('\n')}\n`);
  });
}

/** A free TCP port on loopback (for a child's listener or inspector). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The host's share of busy CPU time (0–1) over the next `ms`, from the kernel's counters. */
async function hostBusy(ms: number): Promise<number> {
  const times = () =>
    os.cpus().reduce(
      (sum, cpu) => {
        const { idle, ...busy } = cpu.times;
        return { idle: sum.idle + idle, busy: sum.busy + Object.values(busy).reduce((a, b) => a + b, 0) };
      },
      { idle: 0, busy: 0 },
    );
  const before = times();
  await sleep(ms);
  const after = times();
  const busy = after.busy - before.busy;
  return busy / Math.max(busy + after.idle - before.idle, 1);
}

/**
 * Lets the host settle between two servers' runs, so the second does not pay for the first:
 * PostgreSQL writes its checkpoint and the kernel its dirty pages now, and the run starts once
 * the cores have been idle for two seconds (at most a minute later). Without it the server
 * measured second often failed its first step.
 */
export async function settle(withDatabase: boolean): Promise<void> {
  const start = Date.now();
  if (withDatabase) await admin('checkpoint');
  execFileSync('sync');
  let busy = 1;
  while (Date.now() - start < 60_000 && (busy = await hostBusy(2_000)) > 0.1);
  progress(`settled in ${Math.round((Date.now() - start) / 1000)} s (host ${Math.round(busy * 100)}% busy)`);
}

export function writeResults(metrics: Record<string, Metric>): string {
  const file = path.join(ROOT, 'bench-results.json');
  writeFileSync(file, `${JSON.stringify({ metrics }, null, 2)}\n`);
  return file;
}

export function ratio(value: number, baseline: number): number {
  return Math.round((value / baseline) * 100) / 100;
}
