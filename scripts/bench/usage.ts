// What a stretch of a benchmark used of each shared component, read as counters before and
// after: one database's transactions and rows (pg_stat_database), the CPU of its PostgreSQL
// backends (/proc; the server runs on this machine, and a pool closes and opens connections
// as it goes, so each backend's CPU is sampled every 250 ms and its last reading kept after it
// ends), a Redis's commands, bytes and CPU (INFO,
// a Redis of the benchmark's own, so nobody else's commands are in it), and processes' CPU.
import type { Redis } from 'ioredis';
import pg from 'pg';
import { cpuSeconds } from './capacity.ts';
import { DATABASE_SERVER } from './support.ts';

export interface Usage {
  at: number;
  /** CPU seconds of each process watched (user + system). */
  processes: number[];
  /** `backends`: the last CPU seconds read of every backend of the database seen since the meter opened. */
  pg: { commits: number; rollbacks: number; rowsWritten: number; backends: Map<number, number> };
  redis: { cpu: number; commands: number; bytesIn: number; bytesOut: number; calls: Record<string, number> };
}

/** The difference between two readings. */
export interface UsageDelta {
  seconds: number;
  processes: number[];
  pg: { commits: number; rollbacks: number; rowsWritten: number; backendCpu: number };
  redis: { cpu: number; commands: number; bytesIn: number; bytesOut: number; calls: Record<string, number> };
}

function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) out[line.slice(0, at)] = line.slice(at + 1);
  }
  return out;
}

/** A process gone since (its /proc entry removed) reads as absent. */
function cpuOf(pid: number): number | undefined {
  try {
    return cpuSeconds(pid);
  } catch {
    return undefined;
  }
}

export class UsageMeter {
  private readonly backends = new Map<number, number>();
  private readonly sampler: ReturnType<typeof setInterval>;
  private sampling: Promise<void> = Promise.resolve();

  private constructor(
    private readonly admin: pg.Client,
    private readonly database: string,
    private readonly redis: Redis,
    private readonly pids: number[],
  ) {
    this.sampler = setInterval(() => void this.sample(), 250);
  }

  /** One sample at a time: a reading waits for the one under way, then takes its own. */
  private sample(): Promise<void> {
    this.sampling = this.sampling.then(async () => {
      const backends = await this.admin.query<{ pid: number }>(
        `select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'`,
        [this.database],
      );
      for (const { pid } of backends.rows) {
        const seconds = cpuOf(pid);
        if (seconds !== undefined) this.backends.set(pid, seconds);
      }
    });
    return this.sampling;
  }

  /** Reads `database`'s counters over a connection to the server's `postgres` database (whose own transactions are not counted). */
  static async open(database: string, redis: Redis, pids: number[]): Promise<UsageMeter> {
    const admin = new pg.Client({ connectionString: DATABASE_SERVER });
    await admin.connect();
    return new UsageMeter(admin, database, redis, pids);
  }

  async read(): Promise<Usage> {
    const stats = await this.admin.query<{ commits: string; rollbacks: string; written: string }>(
      `select xact_commit as commits, xact_rollback as rollbacks, tup_inserted + tup_updated + tup_deleted as written
         from pg_stat_database where datname = $1`,
      [this.database],
    );
    await this.sample();
    const info = parseInfo(await this.redis.info('all'));
    const calls: Record<string, number> = {};
    for (const [key, value] of Object.entries(info)) {
      const match = /^cmdstat_(.+)$/.exec(key);
      const count = /calls=(\d+)/.exec(value)?.[1];
      if (match?.[1] && count) calls[match[1]] = Number(count);
    }
    const row = stats.rows[0];
    return {
      at: performance.now(),
      processes: this.pids.map((pid) => cpuOf(pid) ?? 0),
      pg: {
        commits: Number(row?.commits ?? 0),
        rollbacks: Number(row?.rollbacks ?? 0),
        rowsWritten: Number(row?.written ?? 0),
        backends: new Map(this.backends),
      },
      redis: {
        cpu: Number(info.used_cpu_sys) + Number(info.used_cpu_user),
        commands: Number(info.total_commands_processed),
        bytesIn: Number(info.total_net_input_bytes),
        bytesOut: Number(info.total_net_output_bytes),
        calls,
      },
    };
  }

  async close(): Promise<void> {
    clearInterval(this.sampler);
    await this.sampling;
    await this.admin.end();
  }
}

export function usageBetween(before: Usage, after: Usage): UsageDelta {
  let backendCpu = 0;
  // A backend first seen after `before` started after it: all its CPU is of this stretch.
  for (const [pid, seconds] of after.pg.backends) backendCpu += seconds - (before.pg.backends.get(pid) ?? 0);
  const calls: Record<string, number> = {};
  for (const [name, count] of Object.entries(after.redis.calls)) {
    const delta = count - (before.redis.calls[name] ?? 0);
    if (delta > 0) calls[name] = delta;
  }
  return {
    seconds: (after.at - before.at) / 1000,
    processes: after.processes.map((seconds, i) => seconds - (before.processes[i] ?? 0)),
    pg: {
      commits: after.pg.commits - before.pg.commits,
      rollbacks: after.pg.rollbacks - before.pg.rollbacks,
      rowsWritten: after.pg.rowsWritten - before.pg.rowsWritten,
      backendCpu,
    },
    redis: {
      cpu: after.redis.cpu - before.redis.cpu,
      commands: after.redis.commands - before.redis.commands,
      bytesIn: after.redis.bytesIn - before.redis.bytesIn,
      bytesOut: after.redis.bytesOut - before.redis.bytesOut,
      calls,
    },
  };
}
