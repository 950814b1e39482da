// The one outcome switch: what an attempt's answer makes of its delivery, whatever was sent (a
// webhook, a push, an email). Delivered; retried after the schedule's wait (never sooner than
// the receiver's Retry-After), or dead once the schedule is over; dead at once when the answer
// refuses the payload; a Service switched off (410); a push token removed; an email postponed.
import type { EmailOutcome } from '../email/sender.ts';
import type { PushOutcome } from '../push/outcome.ts';
import type { ClaimedDelivery } from './claims.ts';
import type { AttemptRecord, OutcomeRecord } from './outcomes.ts';
import { nextDelayMs } from './schedule.ts';
import type { Outcome } from './sender.ts';

/** What any sender answers. */
export type AttemptOutcome = Outcome | PushOutcome | EmailOutcome;

/** How the attempt is counted and logged. */
export type Result = 'delivered' | 'skipped' | 'retry' | 'dead' | 'gone' | 'unregistered';

export type Settled =
  | { type: 'record'; record: OutcomeRecord; result: Result }
  /** Not an attempt: the delivery goes back, due at `at`, its attempt not counted. */
  | { type: 'postpone'; at: Date; reason: string };

export interface SettleOptions {
  /** Seconds to wait after each failed attempt; past its end the delivery is dead. */
  retrySchedule: readonly number[];
  /** How long a postponed email waits. */
  postponeMs: number;
}

export function settle(
  delivery: ClaimedDelivery,
  outcome: AttemptOutcome,
  timing: Pick<AttemptRecord, 'startedAt' | 'durationMs'>,
  options: SettleOptions,
  now = Date.now(),
): Settled {
  const attempt = { id: delivery.id, status: outcome.status, error: 'error' in outcome ? outcome.error : null, ...timing };
  const dead: Settled = { type: 'record', record: { ...attempt, type: 'dead' }, result: 'dead' };
  switch (outcome.kind) {
    case 'delivered':
      return { type: 'record', record: { ...attempt, type: 'delivered' }, result: 'delivered' };
    case 'skipped':
      // Nothing to send: the delivery ends with no status and the reason as its last error.
      return { type: 'record', record: { ...attempt, type: 'delivered' }, result: 'skipped' };
    case 'postponed':
      return { type: 'postpone', at: new Date(now + options.postponeMs), reason: outcome.error };
    case 'gone':
      // Only a Service's webhook is switched off; a push webhook's 410 comes as `unregistered`.
      if (delivery.serviceId === null) return dead;
      return { type: 'record', record: { ...attempt, type: 'gone', serviceId: delivery.serviceId }, result: 'gone' };
    case 'unregistered':
      if (delivery.deviceId === null) return dead;
      return {
        type: 'record',
        record: { ...attempt, type: 'unregistered', deviceId: delivery.deviceId, token: delivery.pushToken ?? '' },
        result: 'unregistered',
      };
    case 'failed':
    case 'undeliverable':
      return dead;
    case 'retry': {
      // `attempts` counts the attempt just made.
      const delay = nextDelayMs(delivery.attempts, options.retrySchedule, outcome.retryAfterMs);
      if (delay === null) return dead;
      return { type: 'record', record: { ...attempt, type: 'retry', nextAttemptAt: new Date(now + delay) }, result: 'retry' };
    }
  }
}
