// Counts the statements the server sends to PostgreSQL, by kind, with the mean time from each
// call to its answer (waiting on the connection, the round trip and PostgreSQL's work), the round
// trips they took, and the server's CPU time, for the profile in
// docs/performance.md: `BENCH_NODE_ARGS="--import tsx --import ./scripts/bench/statements.ts"
// BENCH_STATEMENTS=counts.json npm run bench -- --only ingest_socket`. Every query of the
// process goes through pg's Client.query (knex and MikroORM included); at exit the counts are
// written to the file BENCH_STATEMENTS names, and to stderr without it.
import { writeFileSync } from 'node:fs';
import pg from 'pg';

const counts = new Map<string, number>();
/** Per kind, the total time from the call to its answer (queueing on the connection included), in ms. */
const times = new Map<string, number>();
const query = Reflect.get(pg.Client.prototype, 'query') as (this: pg.Client, ...args: unknown[]) => unknown;
/**
 * Round trips: waits for PostgreSQL. Without pipeline mode every statement is one (a statement
 * queued behind another is written once that one is answered); in pipeline mode (db/pipelined.ts)
 * statements written while others are unanswered share their wait, so one starts when a
 * statement is written to a client with none in flight.
 */
let roundTrips = 0;
const inFlight = new WeakMap<pg.Client, number>();

/** A statement's kind: its first words, whitespace folded, parameters aside. */
function kind(arg: unknown): string {
  const text = typeof arg === 'string' ? arg : (arg as { text?: string } | null)?.text;
  return (text ?? '').replace(/\s+/g, ' ').trim().slice(0, 90);
}

pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const key = kind(args[0]);
  counts.set(key, (counts.get(key) ?? 0) + 1);
  const pending = inFlight.get(this) ?? 0;
  if (!(this as { pipeline?: boolean }).pipeline || pending === 0) roundTrips++;
  inFlight.set(this, pending + 1);
  const answered = () => inFlight.set(this, (inFlight.get(this) ?? 1) - 1);
  // The callback is an argument, or (a Query object) the object's own.
  const i = args.findIndex((arg) => typeof arg === 'function');
  const holder = (i >= 0 ? args : args[0]) as Record<string | number, unknown> | null;
  const slot = i >= 0 ? i : 'callback';
  const callback = holder?.[slot];
  if (typeof callback === 'function') {
    const start = performance.now();
    holder![slot] = (...results: unknown[]) => {
      times.set(key, (times.get(key) ?? 0) + performance.now() - start);
      answered();
      (callback as (...results: unknown[]) => void)(...results);
    };
  }
  const result = query.apply(this, args);
  // Promise-style calls (no callback): answered when the promise settles.
  if (typeof callback !== 'function' && result instanceof Promise) result.then(answered, answered);
  return result;
} as typeof pg.Client.prototype.query;

process.on('exit', () => {
  const sorted = Object.fromEntries(
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .map(([key, count]) => {
        const total = times.get(key);
        return [key, total === undefined ? count : { count, mean_ms: Number((total / count).toFixed(3)) }];
      }),
  );
  // The process's own CPU time (user and system, microseconds): what a run cost the server, whatever else ran beside it.
  const json = JSON.stringify({ cpu: process.cpuUsage(), roundTrips, statements: sorted }, null, 2);
  if (process.env.BENCH_STATEMENTS) writeFileSync(process.env.BENCH_STATEMENTS, json);
  else process.stderr.write(`${json}\n`);
});
