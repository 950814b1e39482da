// Which accounts or users keep their messages to the locked way for a while (client-messages.ts,
// agents.ts): a one-statement batch (messages-at-once.ts) that met one of them wrote nothing
// and cost a round trip, and would again, so the next batches with it skip the one statement.
// For a minute only: what sent it there (a standby Service, a device to push to) may end.

const KEPT_MS = 60_000;

export class LockedWay {
  /** Key → until when its messages skip the one statement. */
  private readonly until = new Map<number, number>();

  /** Whether messages of `key` go the locked way now. */
  has(key: number, now: number): boolean {
    const until = this.until.get(key);
    if (until === undefined) return false;
    if (until > now) return true;
    this.until.delete(key);
    return false;
  }

  keep(keys: Iterable<number>, now: number): void {
    for (const key of keys) this.until.set(key, now + KEPT_MS);
  }
}
