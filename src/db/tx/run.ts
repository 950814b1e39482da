// The ordinary transaction runner: the ORM's transaction (entities, flush, nested savepoints),
// as a Transaction object that records notices and hand-offs. Once it committed, they are handed
// on by plain calls (outlets.ts). The group-committed writers run theirs on a held connection
// instead (held.ts, group-commit.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { outletsOf } from './outlets.ts';
import { Transaction } from './transaction.ts';

/** Runs `work` in a transaction; resolves once it committed and its notices and hand-offs were handed on. */
export async function transaction<T>(em: EntityManager, work: (tx: Transaction) => Promise<T>): Promise<T> {
  // An inner transaction would hand on its notices at its savepoint, before the outer one commits.
  if (em.isInTransaction()) throw new Error('transaction() inside a transaction: pass the Transaction on instead');
  const outlets = outletsOf(em);
  let tx: Transaction | undefined;
  const result = await em.transactional((orm) => work((tx = new Transaction(orm, null, outlets.target))));
  if (tx) outlets.deliver(tx.committed());
  return result;
}
