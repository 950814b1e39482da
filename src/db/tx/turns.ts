// Who takes the database next when the group-committed writers (group-commit.ts) wait for it:
// work the node has already accepted (agents' answers, delivery outcomes) before new customer
// messages. In turn, past an embedded node's throughput, its one connection would go round the
// three writers, and every answers' batch would wait for a customers' batch and an outcomes'
// batch: the answers' path (the Service's connections times that wait) falls behind while new
// messages are still acknowledged, and the queue grows where the node cannot see it, in the
// Service (docs/performance.md, Overload). With answers first, the new messages are what wait:
// their writes in flight rise to the admission's bound (http/admission.ts), and past it new
// messages are refused with server_busy, explicitly, while the answers keep coming.
//
// A turn is a place among the pool's connections (its `max`): one on the embedded database. On a
// PostgreSQL server the pool's ten connections outnumber the writers (each writes one batch at a
// time), so every writer has a turn at once and the order never comes into play.
//
// New work is held back for a bounded time only: a customers' batch that has waited `maxWaitMs`
// goes next whatever waits, so a Service writing without pause (a broadcast) slows customers'
// messages but never stops them.
import type { EntityManager } from '@mikro-orm/postgresql';

/** What a held transaction writes: work already accepted (answers, outcomes), or new customer messages. */
export type TurnKind = 'accepted' | 'new';

interface Waiter {
  since: number;
  start(): void;
}

export class Turns {
  private free: number;
  private readonly accepted: Waiter[] = [];
  private readonly fresh: Waiter[] = [];

  constructor(
    width: number,
    private readonly maxWaitMs = 1000,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.free = Math.max(1, width);
  }

  /** Resolves when this write may take a connection, with the function that gives its turn back. */
  async take(kind: TurnKind): Promise<() => void> {
    if (this.free > 0) {
      this.free -= 1;
    } else {
      await new Promise<void>((start) => (kind === 'accepted' ? this.accepted : this.fresh).push({ since: this.now(), start }));
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.next();
    };
  }

  /** Writes waiting for a turn now, by kind. */
  get waiting(): { accepted: number; new: number } {
    return { accepted: this.accepted.length, new: this.fresh.length };
  }

  /** Passes a turn given back to the write that goes next, or frees it. */
  private next(): void {
    const overdue = this.fresh[0] !== undefined && this.now() - this.fresh[0].since >= this.maxWaitMs;
    const waiter = overdue ? this.fresh.shift() : (this.accepted.shift() ?? this.fresh.shift());
    if (waiter) waiter.start();
    else this.free += 1;
  }
}

/** One node's turns per ORM (tests run several nodes in one process), by the ORM's configuration, which forks share. */
const byOrm = new WeakMap<object, Turns>();

export function turnsOf(em: EntityManager): Turns {
  let turns = byOrm.get(em.config);
  if (!turns) {
    const pool = (em.getConnection().getKnex().client as { pool?: { max?: number } }).pool;
    turns = new Turns(pool?.max ?? 1);
    byOrm.set(em.config, turns);
  }
  return turns;
}
