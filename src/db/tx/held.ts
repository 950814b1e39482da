// Transactions of the group-committed writers (group-commit.ts: client messages, agent messages,
// delivery outcomes) on a pooled connection held for the batch, without knex's and MikroORM's
// transaction machinery. A knex transaction builds a knex instance of its own: an empty one
// costs 170–370 µs of CPU on the benchmark machine, 40% of it garbage collection, and half a
// millisecond of a message's latency after the server was idle (docs/performance.md). These
// writers send only raw statements (db/prepared.ts), so they need none of it.
//
// What a MikroORM transaction gives them is kept: the statements run on one connection between
// BEGIN and COMMIT (both sent with statements: db/pipelined.ts), and a failure rolls back and
// rethrows. The Transaction object carries the connection; what it hands on once committed is
// returned with the work's result, for the caller to pass on (outlets.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { send, type Connection, type Pool } from './connection.ts';
import { outletsOf } from './outlets.ts';
import { Transaction, type Committed } from './transaction.ts';
import { turnsOf, type TurnKind } from './turns.ts';

/**
 * The ORM refuses to work in a held transaction: its reads and writes would run on another
 * pooled connection, outside the transaction (and, on the embedded database's single
 * connection, wait for this one forever). Any use of the transaction context fails at once.
 */
const NO_ORM = new Proxy(
  {},
  {
    get(_target, property) {
      throw new Error(`ORM call inside a held transaction (${String(property)}): use prepared() for its statements`);
    },
  },
);

/**
 * The writers' statements find their rows by keys (users, deliveries and chains by id), so one
 * plan fits every call: the generic plan, made once per connection. Left to choose, PostgreSQL
 * plans them anew at every call, since a generic plan of `id = any($1)` assumes ten keys where a
 * batch brings one or two; that planning took 0.1–0.3 ms of PostgreSQL's time a statement, about
 * as much as running them (docs/performance.md). `SET LOCAL` ends with the transaction, so the
 * connection's other users plan as PostgreSQL chooses. A generic plan is as good as the
 * statistics it was made with, which is why the tables are analysed wherever the database does
 * not do it (db/vacuum.ts).
 */
const BEGIN = 'BEGIN; SET LOCAL plan_cache_mode = force_generic_plan;';

/**
 * Runs `work` in a transaction on a held connection; resolves once it committed, with what it
 * hands on. `kind` says whether it writes work already accepted or new customer messages: the
 * first go first when they wait for a connection together (turns.ts).
 */
export async function heldTransaction<T>(
  em: EntityManager,
  work: (tx: Transaction) => Promise<T>,
  kind: TurnKind = 'accepted',
): Promise<{ result: T; committed: Committed }> {
  const giveBack = await turnsOf(em).take(kind);
  try {
    return await onHeldConnection(em, work);
  } finally {
    giveBack();
  }
}

async function onHeldConnection<T>(em: EntityManager, work: (tx: Transaction) => Promise<T>): Promise<{ result: T; committed: Committed }> {
  const pool = em.getConnection().getKnex().client as unknown as Pool;
  const connection: Connection = await pool.acquireConnection();
  const orm = em.fork({ clear: true });
  orm.setTransactionContext(NO_ORM);
  const tx = new Transaction(orm, connection, outletsOf(em).target);
  try {
    await send(connection, BEGIN);
    const result = await work(tx);
    await send(connection, 'COMMIT;');
    return { result, committed: tx.committed() };
  } catch (err) {
    await send(connection, 'ROLLBACK;').catch((rollbackErr: unknown) => {
      // The connection is broken (its failure is what failed the work): the pool drops it.
      connection.__knex__disposed ??= rollbackErr;
    });
    throw err;
  } finally {
    await pool.releaseConnection(connection);
  }
}
