// Transactions of the group-committed writers (group-commit.ts: client messages, agent messages,
// delivery outcomes) on a pooled connection held for the batch, without knex's and MikroORM's
// transaction machinery. A knex transaction builds a knex instance of its own: an empty one
// costs 170 µs of CPU on the benchmark machine, 40% of it garbage collection, and half a
// millisecond of a message's latency after the server was idle (docs/performance.md). These
// writers send only raw statements (prepared.ts), so they need none of it.
//
// What a MikroORM transaction gives them is kept: the statements run on one connection between
// BEGIN and COMMIT (both sent with statements: pipelined.ts), a failure rolls back and rethrows,
// and the ORM's afterTransactionCommit / afterTransactionRollback subscribers (notices published,
// hand-offs adopted) are called with the transaction's EntityManager, as MikroORM calls them.
import { EventType, type EntityManager } from '@mikro-orm/postgresql';

/** The parts of knex's client and of a pooled pg connection used here. */
interface Pool {
  acquireConnection(): Promise<Connection>;
  releaseConnection(connection: Connection): Promise<unknown>;
}

export interface Connection {
  query(config: unknown, callback: (err: Error | null, result?: { rows: unknown[] }) => void): unknown;
  /** Set by knex when the connection failed: the pool drops it instead of handing it out again. */
  __knex__disposed?: unknown;
}

const held = new WeakMap<EntityManager, Connection>();

/** The connection `em`'s held transaction runs on, if `em` is one. */
export function heldConnection(em: EntityManager): Connection | undefined {
  return held.get(em);
}

export function send(connection: Connection, config: unknown): Promise<{ rows: unknown[] }> {
  return new Promise((resolve, reject) => {
    connection.query(config, (err, result) => (err ? reject(err) : resolve(result ?? { rows: [] })));
  });
}

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

/** Runs `work` in a transaction on a held connection; resolves once it committed. */
export async function heldTransaction<T>(em: EntityManager, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  const pool = em.getConnection().getKnex().client as unknown as Pool;
  const connection = await pool.acquireConnection();
  const tx = em.fork({ clear: true });
  tx.setTransactionContext(NO_ORM);
  held.set(tx, connection);
  let result: T;
  try {
    try {
      await send(connection, 'BEGIN;');
      result = await work(tx);
      await send(connection, 'COMMIT;');
    } catch (err) {
      await send(connection, 'ROLLBACK;').catch((rollbackErr: unknown) => {
        // The connection is broken (its failure is what failed the work): the pool drops it.
        connection.__knex__disposed ??= rollbackErr;
      });
      throw err;
    } finally {
      held.delete(tx);
      await pool.releaseConnection(connection);
    }
  } catch (err) {
    await em.getEventManager().dispatchEvent(EventType.afterTransactionRollback, { em: tx });
    throw err;
  }
  await em.getEventManager().dispatchEvent(EventType.afterTransactionCommit, { em: tx });
  return result;
}
