// When the next attempt is due: the configured wait with ±20% jitter (so a recovering
// receiver is not hit by every retry at once), never sooner than the receiver's Retry-After.

const JITTER = 0.2;

/** Milliseconds until the next attempt after `attemptsMade` attempts, or null: no attempts left. */
export function nextDelayMs(
  attemptsMade: number,
  scheduleSeconds: readonly number[],
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number | null {
  const wait = scheduleSeconds[attemptsMade];
  if (wait === undefined) return null;
  const jittered = wait * 1000 * (1 - JITTER + 2 * JITTER * random());
  return Math.max(Math.round(jittered), retryAfterMs ?? 0);
}
