// What this machine's PostgreSQL and a Redis sustain at most, measured simply with their own
// benchmark tools (C clients, so that the load generator is not what limits them): commits a
// second of one-row autocommitted inserts (each its own WAL flush; concurrent ones share
// flushes, as PostgreSQL's group commit does), and PUBLISH commands a second with no subscriber.
// Both tools run on the same cores as the server they measure: a ceiling of this machine.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export interface Ceiling {
  perSecond: number;
  clients: number;
  seconds?: number;
  requests?: number;
}

/** pgbench, `clients` connections, each sending `insert into commit_probe values (1)` for `seconds`. */
export async function postgresCommitsCeiling(databaseUrl: string, clients: number, seconds: number): Promise<Ceiling> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('create table if not exists commit_probe (v int)');
  await client.end();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'palaver-commits-'));
  const script = path.join(dir, 'commit.sql');
  writeFileSync(script, 'insert into commit_probe values (1);\n');
  try {
    const { stdout } = await run('pgbench', ['-n', '-c', String(clients), '-j', '2', '-T', String(seconds), '-f', script, databaseUrl]);
    const tps = /tps = ([0-9.]+) \(without initial connection time\)/.exec(stdout)?.[1];
    if (!tps) throw new Error(`pgbench said:\n${stdout}`);
    return { perSecond: Math.round(Number(tps)), clients, seconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** redis-benchmark, `clients` connections, `requests` PUBLISH commands in all, unpipelined (as the nodes send theirs). */
export async function redisOpsCeiling(port: number, clients: number, requests: number): Promise<Ceiling> {
  const { stdout } = await run('redis-benchmark', [
    '-p',
    String(port),
    '-q',
    '-n',
    String(requests),
    '-c',
    String(clients),
    'publish',
    'palaver-probe',
    'x',
  ]);
  const rps = /publish palaver-probe x: ([0-9.]+) requests per second/.exec(stdout)?.[1];
  if (!rps) throw new Error(`redis-benchmark said:\n${stdout}`);
  return { perSecond: Math.round(Number(rps)), clients, requests };
}
