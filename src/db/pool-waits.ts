// How long work waits for a pooled database connection: the sign that a node's database is
// saturated (every connection busy; on the embedded database, its one connection). Read by the
// admission of client writes (http/admission.ts): past a bound, a node refuses new messages at
// once instead of accepting more than it can deliver. Without it, an embedded node past its
// capacity kept acknowledging every message while its webhooks fell minutes behind: the
// client writers' batches took the one connection, the delivery worker's claims waited behind
// them, and no answer came back (docs/performance.md, Overload).
//
// Measured from the pool's own events (tarn, under knex): every acquisition, whoever makes it
// (group commits, the worker's claims, ORM reads), from its request to its connection.

import type { EntityManager } from '@mikro-orm/postgresql';
import { OpenWaits } from './open-waits.ts';

/** The events of knex's pool (tarn) read here. */
interface PoolEvents {
  on(event: 'acquireRequest' | 'acquireSuccess' | 'acquireFail', listener: (eventId: number) => void): unknown;
}

const WINDOW_MS = 1000;

export class PoolWaits {
  /** Acquisitions waiting now, by request id. */
  private readonly waiting = new OpenWaits();
  private windowStart = performance.now();
  private windowSum = 0;
  private windowCount = 0;
  /** The mean wait of the acquisitions that ended in the last full window. */
  private lastMean = 0;

  /** The waits of the pool behind an EntityManager (knex's, under MikroORM). */
  static of(em: EntityManager): PoolWaits {
    return new PoolWaits((em.getConnection().getKnex().client as { pool: PoolEvents }).pool);
  }

  constructor(pool: PoolEvents) {
    pool.on('acquireRequest', (id) => this.waiting.began(id, performance.now()));
    const ended = (id: number) => {
      const at = this.waiting.ended(id);
      if (at === undefined) return;
      const now = performance.now();
      this.roll(now);
      this.windowSum += now - at;
      this.windowCount += 1;
    };
    pool.on('acquireSuccess', ended);
    pool.on('acquireFail', ended);
  }

  /**
   * The database's wait now, in ms: the longest an acquisition still waiting has waited, or the
   * mean wait of those that ended in the last second, whichever is more. The mean keeps a node
   * from admitting a burst in the instant between two saturated batches; the oldest waiting
   * shows a saturation at once, before any acquisition ends.
   */
  waitMs(): number {
    const now = performance.now();
    this.roll(now);
    const current = this.windowCount > 0 ? this.windowSum / this.windowCount : 0;
    return Math.max(this.waiting.oldestAgeMs(now), current, this.lastMean);
  }

  private roll(now: number): void {
    if (now - this.windowStart < WINDOW_MS) return;
    // A window with no acquisition ended means nothing waited: the mean is forgotten after one window.
    this.lastMean = now - this.windowStart < 2 * WINDOW_MS && this.windowCount > 0 ? this.windowSum / this.windowCount : 0;
    this.windowStart = now;
    this.windowSum = 0;
    this.windowCount = 0;
  }
}
