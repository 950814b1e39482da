// The statements of hot paths (callers, message batches, deliveries) as named prepared
// statements: PostgreSQL parses and plans each once per connection instead of at every call.
// Their planning cost several times their execution (a claim: 0.6 ms to plan, 0.08 ms to run),
// and MikroORM's execute() sends every statement as text with its values inlined, planned anew.
// The SQL uses `?` placeholders, as execute() does; values go as parameters, and errors become
// MikroORM's DriverExceptions, as execute() makes them (a caller's bad value stays a 422).
import { createHash } from 'node:crypto';
import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import { Sql } from './named.ts';
import { send, type Connection, type Pool } from './tx/connection.ts';
import { Transaction } from './tx/transaction.ts';

/**
 * Statement names by text: the same text is the same prepared statement on every connection, and
 * two texts never share a name (pg refuses a name reused for another text only as it sends it,
 * too late to keep pipelined.ts from queuing the COMMIT behind it).
 */
const names = new Map<string, string>();

function nameOf(sql: string): string {
  let name = names.get(sql);
  if (!name) {
    name = `palaver_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    names.set(sql, name);
  }
  return name;
}

interface Options {
  /** The statement is the transaction's last: its COMMIT is queued right behind it (pipelined.ts). */
  commit?: boolean;
}

/**
 * Runs `sql` in the transaction `on` (or, given an EntityManager, in its transaction if it has
 * one); resolves to the rows. With `commit`, the statement is the transaction's last: its COMMIT
 * goes with it (pipelined.ts), and nothing may be sent, or thrown, in the transaction after it.
 * A statement of a hot path lives in a file of its own (a `sql/` folder beside its domain), which
 * builds it with named() and types its rows: `prepared<Row>(tx, insertPushes(values))`.
 */
export async function prepared<T extends object>(on: EntityManager | Transaction, statement: Sql, options?: Options): Promise<T[]>;
export async function prepared<T extends object>(
  on: EntityManager | Transaction,
  sql: string,
  params: readonly unknown[],
  options?: Options,
): Promise<T[]>;
export async function prepared<T extends object>(
  on: EntityManager | Transaction,
  text: string | Sql,
  paramsOrOptions?: readonly unknown[] | Options,
  options?: Options,
): Promise<T[]> {
  const statement = typeof text === 'string' ? new Sql(text, (paramsOrOptions ?? []) as unknown[]) : text;
  const { commit = false } = (typeof text === 'string' ? options : (paramsOrOptions as Options | undefined)) ?? {};
  const { sql, params } = statement;
  const em = on instanceof Transaction ? on.em : on;
  if (on instanceof Transaction && on.connection) return onHeld<T>(em, on.connection, sql, params, commit);
  if (!commit && !em.getTransactionContext()) return onPooled<T>(em, sql, params);
  const query = em
    .getConnection()
    .getKnex()
    .raw(sql, params as readonly Knex.RawBinding[])
    .options(commit ? { name: nameOf(sql), commit } : { name: nameOf(sql) });
  const trx = em.getTransactionContext<Parameters<typeof query.transacting>[0]>();
  if (trx) query.transacting(trx);
  try {
    const result = (await query) as { rows: T[] };
    return result.rows;
  } catch (err) {
    throw driverError(em, err);
  }
}

/** Statement texts with `$n` placeholders, as knex makes them from the `?` ones. */
const positional = new Map<string, string>();

/** The statement straight on a held transaction's connection (tx/held.ts), as knex would send it. */
async function onHeld<T extends object>(
  em: EntityManager,
  connection: Connection,
  sql: string,
  params: readonly unknown[],
  commit: boolean,
): Promise<T[]> {
  let text = positional.get(sql);
  if (text === undefined) {
    // knex compiles it once (placeholder count and undefined values checked as for every query).
    text = em
      .getConnection()
      .getKnex()
      .raw(sql, params as readonly Knex.RawBinding[])
      .toSQL()
      .toNative().sql;
    positional.set(sql, text);
  } else if (params.includes(undefined)) {
    throw new Error(`Undefined binding(s) detected for: ${sql.slice(0, 80)}`);
  }
  try {
    const result = await send(connection, { name: nameOf(sql), text, values: params, commit });
    return result.rows as T[];
  } catch (err) {
    throw driverError(em, err);
  }
}

/**
 * A statement outside any transaction (the hot paths' reads: a Client API caller, a Service's
 * key), on a connection taken from knex's pool for it alone, as a held transaction takes one,
 * without knex's query runner: a one-row read then costs the process 0.09–0.11 ms of CPU on
 * PostgreSQL where it cost 0.11–0.17 ms (0.16–0.24 against 0.25–0.37 ms on the embedded
 * database, PGlite's thread included). On the embedded database's one connection, the main
 * thread's time around a statement is time the connection waits.
 */
async function onPooled<T extends object>(em: EntityManager, sql: string, params: readonly unknown[]): Promise<T[]> {
  const pool = em.getConnection().getKnex().client as unknown as Pool;
  const connection = await pool.acquireConnection();
  try {
    return await onHeld<T>(em, connection, sql, params, false);
  } finally {
    await pool.releaseConnection(connection);
  }
}

/** A driver's error as MikroORM's DriverException, as execute() makes it (a caller's bad value stays a 422). */
function driverError(em: EntityManager, err: unknown): Error {
  return em
    .getPlatform()
    .getExceptionConverter()
    .convertException(err as Error);
}
