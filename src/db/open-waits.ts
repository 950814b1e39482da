// Waits still open, by id, in the order they began, so the first is the oldest: how long the
// oldest has waited is read at once, before any of them ends. Used by PoolWaits (acquisitions
// of a database connection) and WriteWaits (a writer's callers), each with its own window over
// the waits that ended.

export class OpenWaits {
  /** id → when it began; a Map keeps insertion order. */
  private readonly open = new Map<number, number>();

  began(id: number, at: number): void {
    this.open.set(id, at);
  }

  /** When the wait `id` began, now forgotten; undefined when it was not open (ended already). */
  ended(id: number): number | undefined {
    const at = this.open.get(id);
    if (at !== undefined) this.open.delete(id);
    return at;
  }

  /** How long the oldest open wait has waited at `now`, in ms; 0 with none open. */
  oldestAgeMs(now: number): number {
    const oldest = this.open.values().next();
    return oldest.done ? 0 : now - oldest.value;
  }
}
