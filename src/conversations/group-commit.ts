// Group commit: writes handed in while a transaction is being written wait for it and then go
// together in the next one, so under load one commit (one WAL flush, a handful of statements)
// takes many of them. Each caller is answered only after the commit that holds its write.
// Used by chat clients' messages, by agents' messages and by the delivery worker's outcomes.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Histogram } from 'prom-client';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';

/** What became of one item of a batch: written, or refused (that caller's error alone). */
export type Written<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommitOptions<I, R> {
  /** The `writer` label of the batch size histogram, and in logs. */
  name: string;
  em: () => EntityManager;
  logger: Logger;
  /** Items per transaction, by `name` (palaver_message_batch_size for messages); optional for writers of other things. */
  batchSize?: Histogram<'writer'>;
  /** The most items one transaction takes; more wait for the next. */
  maxBatch?: number;
  /**
   * Writes a batch inside the transaction and says, in order, what became of each item. A
   * throw rolls the whole batch back; its items are then written one transaction each.
   */
  write(tx: EntityManager, batch: readonly I[]): Promise<Array<Written<R>>>;
  /**
   * Up to `transactions` batches written at once (default one), none two of whose items share
   * a `key`: for writers whose items of different keys take no lock in common but the
   * ordered locks they take anyway (messages: their users'), so that a batch no longer waits
   * for the one before it to commit.
   */
  parallel?: { transactions: number; key: (item: I) => unknown };
}

interface Pending<I, R> {
  item: I;
  resolve(result: R): void;
  reject(err: unknown): void;
}

export class GroupCommit<I, R> {
  private queue: Array<Pending<I, R>> = [];
  /** Set while a turn of the event loop gathers the next batch. */
  private gathering = false;
  /** Transactions being written, each with the keys of its items. */
  private readonly writing = new Set<{ keys: ReadonlySet<unknown>; done: Promise<void> }>();
  private readonly maxBatch: number;
  private readonly transactions: number;

  constructor(private readonly options: GroupCommitOptions<I, R>) {
    this.maxBatch = options.maxBatch ?? 200;
    this.transactions = options.parallel?.transactions ?? 1;
  }

  /** Resolves once the item is committed; rejects with the caller's error alone. */
  send(item: I): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.gather();
    });
  }

  /** Waits for everything handed in so far (shutdown: before the database closes). */
  async drain(): Promise<void> {
    while (this.gathering || this.writing.size > 0) {
      await Promise.all([...this.writing].map((w) => w.done));
      if (this.gathering) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** One turn of the event loop first, so that items which arrived together go together. */
  private gather(): void {
    if (this.gathering || this.queue.length === 0 || this.writing.size >= this.transactions) return;
    this.gathering = true;
    setImmediate(() => {
      this.gathering = false;
      this.start();
    });
  }

  /**
   * Starts transactions while there are free ones and items to take. An item whose key a
   * transaction being written holds waits for it: one key's items are never written by two
   * transactions at once, so they commit in the order they were handed in, even when a
   * batch fails and its items are written again one by one.
   */
  private start(): void {
    const key = this.options.parallel?.key;
    while (this.writing.size < this.transactions && this.queue.length > 0) {
      const busy = new Set([...this.writing].flatMap((w) => [...w.keys]));
      const batch: Array<Pending<I, R>> = [];
      const keys = new Set<unknown>();
      this.queue = this.queue.filter((pending) => {
        const k = key?.(pending.item);
        // Behind a busy key, or behind an earlier item of a key this batch passed over: keep order.
        if (batch.length >= this.maxBatch || (key && busy.has(k))) {
          if (key) busy.add(k);
          return true;
        }
        batch.push(pending);
        keys.add(k);
        return false;
      });
      if (batch.length === 0) return;
      this.options.batchSize?.observe({ writer: this.options.name }, batch.length);
      const writing = { keys, done: Promise.resolve() };
      writing.done = this.commit(batch).finally(() => {
        this.writing.delete(writing);
        this.gather();
      });
      this.writing.add(writing);
    }
  }

  private async commit(batch: Array<Pending<I, R>>): Promise<void> {
    try {
      const items = batch.map((p) => p.item);
      const outcomes = await this.options.em().transactional((tx) => this.options.write(tx, items));
      batch.forEach((pending, i) => {
        const outcome = outcomes[i];
        if (outcome?.ok) pending.resolve(outcome.value);
        else pending.reject(outcome ? outcome.error : new Error('not written'));
      });
    } catch (err) {
      if (batch.length === 1) return batch[0]?.reject(err);
      // Nothing of the batch was written. Each item alone, so one that cannot be written
      // (or a deadlock, or a lost connection) fails only its own caller.
      // A refusal found only in the batch's statements (a merge race) is a caller's error, not ours.
      const level = err instanceof AppError ? 'info' : 'warn';
      this.options.logger[level](
        { err, writer: this.options.name, items: batch.length },
        'group commit failed; writing its items one by one',
      );
      for (const pending of batch) await this.commit([pending]);
    }
  }
}
