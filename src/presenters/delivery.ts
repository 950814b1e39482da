import type { DeliveryStats } from '../deliveries/stats.ts';
import type { DeliveryAttempt, DeliveryLogEntry } from '../deliveries/listings.ts';

/**
 * A row of the deliveries log, with the payload as the Service received (or will receive) it;
 * for a push (deviceId instead of serviceId) the data map the app receives; for an email (userId)
 * the user and the newest answer it covers.
 */
export function presentDelivery(entry: DeliveryLogEntry) {
  return {
    id: entry.id,
    serviceId: entry.serviceId,
    deviceId: entry.deviceId,
    // Only on emails, whose target is a user: webhook and push records keep their shape.
    ...(entry.userId !== null ? { userId: entry.userId } : {}),
    kind: entry.kind,
    state: entry.state,
    attempts: entry.attempts,
    // A pending delivery behind an earlier one of its conversation has no attempt of its own
    // planned: it goes once that one is delivered or dead.
    nextAttemptAt: entry.state === 'pending' && entry.ready ? new Date(entry.nextAttemptAt).toISOString() : null,
    waitsForEarlier: entry.state === 'pending' && !entry.ready,
    lastStatus: entry.lastStatus,
    lastError: entry.lastError,
    createdAt: new Date(entry.createdAt).toISOString(),
    deliveredAt: entry.deliveredAt ? new Date(entry.deliveredAt).toISOString() : null,
    payload: JSON.parse(entry.payload) as unknown,
  };
}

/** One attempt: `outcome` delivered, retry (at `nextAttemptAt`), dead, gone (410: the Service switched off) or unregistered (a push token refused). */
export function presentDeliveryAttempt(attempt: DeliveryAttempt) {
  return {
    attempt: attempt.attempt,
    startedAt: new Date(attempt.startedAt).toISOString(),
    durationMs: attempt.durationMs,
    status: attempt.status,
    error: attempt.error,
    outcome: attempt.outcome,
    nextAttemptAt: attempt.nextAttemptAt ? new Date(attempt.nextAttemptAt).toISOString() : null,
  };
}

export function presentDeliveryStats(stats: DeliveryStats) {
  return {
    pending: stats.pending,
    dead: stats.dead,
    delivered: stats.delivered,
    lastHour: stats.lastHour.map((m) => ({ minute: m.minute.toISOString(), delivered: m.delivered, failed: m.failed })),
  };
}
