// One log line per failed attempt of a delivery (webhook, push or email), a warning either way: one
// that will be retried says when (a Service that is down shows among the access lines), one
// that is dead says so. Ids, the attempt's number, status and error only: no
// stack (an answer or a refused connection is not a fault of ours) and no payload.
import type { Logger } from '../logger.ts';
import type { ClaimedDelivery } from './claims.ts';

export interface FailedAttempt {
  status: number | null;
  error: string | null;
  /** When the next attempt is due; null: none, the delivery is dead. */
  nextAttemptAt: Date | null;
}

export function logFailedAttempt(logger: Logger, delivery: ClaimedDelivery, failed: FailedAttempt): void {
  const push = delivery.deviceId !== null;
  const email = delivery.deviceId === null && delivery.serviceId === null;
  const line = {
    ...(delivery.deviceId !== null
      ? { deviceId: delivery.deviceId }
      : delivery.serviceId === null
        ? { userId: delivery.userId }
        : { serviceId: delivery.serviceId }),
    deliveryId: delivery.id,
    // The claim counted this attempt already.
    attempt: delivery.attempts,
    status: failed.status,
    error: failed.error,
  };
  const what = push ? 'push' : email ? 'email' : 'webhook';
  if (failed.nextAttemptAt === null) logger.warn(line, `${what} attempt failed; delivery dead`);
  else {
    const next = failed.nextAttemptAt.toISOString();
    const seconds = Math.max(0, Math.ceil((failed.nextAttemptAt.getTime() - Date.now()) / 1000));
    logger.warn({ ...line, nextAttemptAt: next }, `${what} attempt failed; will retry in ${seconds} s, at ${next}`);
  }
}
