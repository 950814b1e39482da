// Transactions of the group-committed writers (group-commit.ts: client messages, agent messages,
// delivery outcomes) on a pooled connection held for the batch, without knex's and MikroORM's
// transaction machinery. A knex transaction builds a knex instance of its own: an empty one
// costs 170 µs of CPU on the benchmark machine, 40% of it garbage collection, and half a
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
import { SharedEnding, Transaction, type Committed } from './transaction.ts';

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

/** Runs `work` in a transaction on a held connection; resolves once it committed, with what it hands on. */
export async function heldTransaction<T>(
  em: EntityManager,
  work: (tx: Transaction) => Promise<T>,
): Promise<{ result: T; committed: Committed }> {
  return held(em, async (orm, connection) => {
    const tx = new Transaction(orm, connection, outletsOf(em).target);
    const result = await work(tx);
    return { result, committed: tx.committed() };
  });
}

/**
 * Runs several works in one transaction on a held connection, at once: their statements
 * interleave on the connection, so statements of different works share round trips (shared.ts).
 * Each work has a Transaction of its own (its notices, hand-offs and chain locks); the COMMIT
 * goes with the last work's last statement (SharedEnding). One work failing fails them all: the
 * transaction rolls back once every work has ended.
 */
export async function sharedHeldTransaction(
  em: EntityManager,
  works: ReadonlyArray<(tx: Transaction) => Promise<unknown>>,
): Promise<{ results: unknown[]; committed: Committed }> {
  return held(em, async (orm, connection) => {
    const ending = new SharedEnding(works.length);
    const { target } = outletsOf(em);
    const txs = works.map(() => new Transaction(orm, connection, target, ending));
    const settled = await Promise.allSettled(
      works.map(async (work, i) => {
        const tx = txs[i] as Transaction;
        try {
          const result = await work(tx);
          tx.workEnded(false);
          return result;
        } catch (err) {
          tx.workEnded(true);
          throw err;
        }
      }),
    );
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    const committed = txs.map((tx) => tx.committed());
    return {
      results: settled.map((s) => (s as PromiseFulfilledResult<unknown>).value),
      committed: {
        notices: committed.flatMap((c) => c.notices),
        handoffs: committed.flatMap((c) => c.handoffs),
        due: committed.some((c) => c.due),
      },
    };
  });
}

/** BEGIN, the work, COMMIT on a connection held for it; ROLLBACK when the work fails. */
async function held<R>(em: EntityManager, work: (orm: EntityManager, connection: Connection) => Promise<R>): Promise<R> {
  const pool = em.getConnection().getKnex().client as unknown as Pool;
  const connection: Connection = await pool.acquireConnection();
  const orm = em.fork({ clear: true });
  orm.setTransactionContext(NO_ORM);
  try {
    await send(connection, BEGIN);
    const result = await work(orm, connection);
    await send(connection, 'COMMIT;');
    return result;
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
