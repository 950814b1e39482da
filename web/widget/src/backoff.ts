// A delay that doubles on each failure, up to a ceiling, and starts over after a success: how the
// widget tries again what failed for a reason that may pass (no network, a busy server), without
// ever calling Palaver in a tight loop.

export class Backoff {
  private delay: number;

  constructor(
    private readonly first = 1000,
    private readonly most = 30_000,
  ) {
    this.delay = first;
  }

  /** The delay before the next try; the one after it is twice as long. */
  next(): number {
    const delay = this.delay;
    this.delay = Math.min(delay * 2, this.most);
    return delay;
  }

  reset(): void {
    this.delay = this.first;
  }
}
