// One log line per failed attempt of a delivery (webhook, push or email): info while it will be
// retried, warn when the delivery dies. Ids, the attempt's number, status and error only: no
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
  else logger.info({ ...line, nextAttemptAt: failed.nextAttemptAt.toISOString() }, `${what} attempt failed; will retry`);
}
