// How many claimed deliveries may wait in a node's memory for a bucket's slots (worker.ts). A
// claim takes only what is free when it starts, and a busy bucket sends what waits long before
// the claim's round trip ends: under load a claim takes 40-150 ms, in which a Service answering
// at once takes a hundred webhooks or more. With room for only as many as its slots, a node whose
// worker had fallen behind (every delivery found by a claim) sent 273 webhooks a second where
// hand-offs had sent 607, the Service's slots a quarter busy, and it stayed behind. So the room
// follows what the bucket started while the last claim ran.

export class WaitingRoom {
  /** Per bucket, its room when more than its slots. */
  private readonly rooms = new Map<number, number>();
  /** Attempts started per bucket since the claim under way began; undefined between claims. */
  private started: Map<number, number> | undefined;

  constructor(private readonly slotsOf: (bucket: number) => number) {}

  /** How many deliveries of a bucket may wait for its slots: never fewer than its slots. */
  of(bucket: number): number {
    return this.rooms.get(bucket) ?? this.slotsOf(bucket);
  }

  /** Before a claim's statement: attempts started from now on are counted. */
  claimStarts(): void {
    this.started = new Map();
  }

  /** An attempt started (counted while a claim runs). */
  attemptStarted(bucket: number): void {
    this.started?.set(bucket, (this.started.get(bucket) ?? 0) + 1);
  }

  /**
   * After a claim, answered or failed: each bucket may keep twice what it started meanwhile, so
   * that what the next claim brings arrives before the bucket runs dry even if that claim takes
   * twice as long. When the bucket slows down the room halves at most per claim, and never falls
   * under its slots: a slow Service keeps few deliveries waiting, whose leases would otherwise
   * run out in memory (the worker gives those back unsent).
   */
  claimEnded(): void {
    const started = this.started ?? new Map<number, number>();
    this.started = undefined;
    for (const bucket of new Set([...started.keys(), ...this.rooms.keys()])) {
      const slots = this.slotsOf(bucket);
      const room = Math.max(slots, 2 * (started.get(bucket) ?? 0), Math.floor(this.of(bucket) / 2));
      if (room > slots) this.rooms.set(bucket, room);
      else this.rooms.delete(bucket);
    }
  }
}
