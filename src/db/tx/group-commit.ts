// Group commit: writes handed in while a transaction is being written wait for it and then go
// together in the next one, so under load one commit (one WAL flush, a handful of statements)
// takes many of them. Each caller is answered only after the commit that holds its write.
// Used by chat clients' messages, by agents' messages and by the delivery worker's outcomes.
// Once a batch committed, its notices go to the gateway and its hand-offs to the worker
// (outlets.ts), before its callers are answered.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Counter, Histogram } from 'prom-client';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { heldTransaction } from './held.ts';
import { outletsOf } from './outlets.ts';
import type { Committed, Transaction } from './transaction.ts';
import type { TurnKind } from './turns.ts';
import type { WriteWaits } from './write-waits.ts';

/** What became of one item of a batch: written, or refused (that caller's error alone). */
export type Written<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommitOptions<I, R> {
  /** The `writer` label of the batch size histogram, and in logs. */
  name: string;
  em: () => EntityManager;
  logger: Logger;
  /** Items per transaction, by `name` (palaver_message_batch_size for messages); optional for writers of other things. */
  batchSize?: Histogram<'writer'>;
  /** Batches tried in one statement (atOnce), by whether it wrote them (`written` true or false). */
  oneStatementBatches?: Counter<'writer' | 'written'>;
  /** The most items one transaction takes; more wait for the next. */
  maxBatch?: number;
  /**
   * What its batches write: work already accepted (the default), or new customer messages, which
   * let the others go first when they wait for the database together (turns.ts).
   */
  turn?: TurnKind;
  /** Told of each item from send to its answer (the agents' writer: the admission's answers_waiting sign). */
  waits?: WriteWaits;
  /**
   * Writes a batch inside the transaction and says, in order, what became of each item. A
   * throw rolls the whole batch back; its items are then written one transaction each. The
   * transaction is a held one (held.ts): raw statements only, through prepared().
   */
  write(tx: Transaction, batch: readonly I[]): Promise<Array<Written<R>>>;
  /**
   * Asked first when given: how to write the batch in a transaction of one statement, which
   * commits it or writes nothing (the client writer on the embedded database,
   * conversations/messages-at-once.ts); null when it cannot. When it cannot or wrote nothing,
   * the batch goes to `write`, in a transaction of its own.
   */
  atOnce?(batch: readonly I[]): AtOnce<R> | null;
}

/** A batch's one statement: what became of each item, or 'check failed' when it wrote nothing. */
export type AtOnce<R> = (tx: Transaction) => Promise<Array<Written<R>> | 'check failed'>;

interface Pending<I, R> {
  item: I;
  resolve(result: R): void;
  reject(err: unknown): void;
}

export class GroupCommit<I, R> {
  private queue: Array<Pending<I, R>> = [];
  private running: Promise<void> | null = null;
  private readonly maxBatch: number;
  /**
   * Forked once for the writer's life, not for every batch: a batch uses it only to fork its held
   * transaction's ORM (held.ts) and to find its outlets, so it never holds an entity, and a fork
   * (a unit of work, identity map, factory and loader) per batch was about 1% of the server's
   * CPU in a pipeline profile.
   */
  private readonly em: EntityManager;

  constructor(private readonly options: GroupCommitOptions<I, R>) {
    this.maxBatch = options.maxBatch ?? 200;
    this.em = options.em();
  }

  /** Resolves once the item is committed; rejects with the caller's error alone. */
  send(item: I): Promise<R> {
    const ended = this.options.waits?.begin();
    const written = new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.running ??= this.run();
    });
    return ended ? written.finally(ended) : written;
  }

  /** Waits for everything handed in so far (shutdown: before the database closes). */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  private async run(): Promise<void> {
    // One turn of the event loop first, so requests that arrived together go together.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        this.options.batchSize?.observe({ writer: this.options.name }, batch.length);
        await this.commit(batch);
      }
    } finally {
      this.running = null;
    }
  }

  private async commit(batch: Array<Pending<I, R>>): Promise<void> {
    const { em } = this;
    const items = batch.map((p) => p.item);
    let written: { result: Array<Written<R>>; committed: Committed };
    try {
      const work = this.options.atOnce?.(items);
      const atOnce = work ? await heldTransaction(em, work, this.options.turn) : null;
      if (atOnce) this.options.oneStatementBatches?.inc({ writer: this.options.name, written: String(atOnce.result !== 'check failed') });
      written =
        atOnce && atOnce.result !== 'check failed'
          ? { result: atOnce.result, committed: atOnce.committed }
          : await heldTransaction(em, (tx) => this.options.write(tx, items), this.options.turn);
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
      return;
    }
    // Committed: the gateway and the worker first, so a caller answered has its change on its way.
    outletsOf(em).deliver(written.committed);
    batch.forEach((pending, i) => {
      const outcome = written.result[i];
      if (outcome?.ok) pending.resolve(outcome.value);
      else pending.reject(outcome ? outcome.error : new Error('not written'));
    });
  }
}
