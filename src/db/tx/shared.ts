// The group-committed writers' batches of the moment in one transaction, on the embedded database.
// Its one connection runs one transaction at a time, and each round trip of a transaction waits
// for this node's event loop to read the answer and send the next statement, during which the
// connection does nothing else (docs/performance.md, Embedded database). A client batch, an
// agent batch and a batch of delivery outcomes took five round trips in three transactions;
// together they take two: the lock statements of all three in the first, the inserts with the
// COMMIT in the second. On PostgreSQL each writer keeps a transaction of its own on its own
// connection: they run in parallel there, and one writer's locks never wait for another's.
//
// Batches touching the same users never share a transaction: each writer reads its users under
// its locks and writes in a later statement from what it read, which another writer's statements
// in between would make stale (a message's previous one, for a start). Such a batch waits for the
// next transaction, as it waited for the other writer's lock before. A transaction that fails is
// written again work by work, each in a transaction of its own, so one writer's failure is
// answered to that writer alone (group-commit.ts then writes its items one by one).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger.ts';
import { heldTransaction, sharedHeldTransaction } from './held.ts';
import { outletsOf } from './outlets.ts';
import type { Transaction } from './transaction.ts';

interface Work {
  /** The users the work reads and writes; works with a user in common never share a transaction. */
  users: readonly number[];
  run: (tx: Transaction) => Promise<unknown>;
  resolve: (result: unknown) => void;
  reject: (err: unknown) => void;
}

export class SharedTransactions {
  private waiting: Work[] = [];
  private running: Promise<void> | null = null;
  private readonly em: EntityManager;

  constructor(
    em: () => EntityManager,
    private readonly logger: Logger,
  ) {
    this.em = em();
  }

  /**
   * Runs `work` in the next transaction, with whatever other writers hand in meanwhile; resolves
   * once it committed and the transaction's notices and hand-offs were handed on (outlets.ts).
   */
  run<T>(users: readonly number[], work: (tx: Transaction) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ users, run: work, resolve: resolve as (result: unknown) => void, reject });
      this.running ??= this.loop();
    });
  }

  private async loop(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        // One turn of the event loop, so every writer answered by the last transaction has
        // handed in its next batch (each does so a few promise steps after it was answered).
        await new Promise((resolve) => setImmediate(resolve));
        await this.commit(this.take());
      }
    } finally {
      this.running = null;
    }
  }

  /** The waiting works whose users no work taken before them has, in the order they came. */
  private take(): Work[] {
    const users = new Set<number>();
    const taken: Work[] = [];
    const left: Work[] = [];
    for (const work of this.waiting) {
      if (work.users.some((id) => users.has(id))) {
        left.push(work);
        continue;
      }
      for (const id of work.users) users.add(id);
      taken.push(work);
    }
    this.waiting = left;
    return taken;
  }

  private async commit(works: Work[]): Promise<void> {
    const only = works.length === 1 ? works[0] : undefined;
    if (only) return this.alone(only);
    let written: Awaited<ReturnType<typeof sharedHeldTransaction>>;
    try {
      written = await sharedHeldTransaction(
        this.em,
        works.map((work) => work.run),
      );
    } catch (err) {
      this.logger.warn({ err, works: works.length }, 'shared transaction failed; writing its works one by one');
      for (const work of works) await this.alone(work);
      return;
    }
    outletsOf(this.em).deliver(written.committed);
    works.forEach((work, i) => work.resolve(written.results[i]));
  }

  private async alone(work: Work): Promise<void> {
    try {
      const { result, committed } = await heldTransaction(this.em, work.run);
      outletsOf(this.em).deliver(committed);
      work.resolve(result);
    } catch (err) {
      work.reject(err);
    }
  }
}
