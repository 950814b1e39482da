// The attempts of an outcome batch logged in delivery_attempts (outcomes.ts): a CTE named
// `logged`, for the first statement of the batch that changes deliveries, so that its snapshot
// shows the rows as the attempts found them.
import { named, type Sql } from '../../db/named.ts';
import { pgIntArray, pgTextArray, pgUuidArray } from '../../db/pg-arrays.ts';

/** One attempt as outcomes.ts records it. */
export interface LoggedAttempt {
  id: string;
  /** The outcome: delivered, dead, unregistered, retry, gone. */
  type: string;
  status: number | null;
  error: string | null;
  startedAt: Date;
  durationMs: number;
  nextAttemptAt?: Date;
}

/**
 * One row per attempt, for the records that will change their delivery (the same conditions as
 * end-deliveries.ts and release-deliveries.ts): an attempt whose lease another node has taken
 * over since is not the delivery's any more, and the attempt of that node is logged instead.
 * Attempts are numbered over the delivery's life: a redelivery starts its retries afresh, its
 * attempts go on counting. Each delivery row is held (`for key share`, in id order) until the
 * batch commits: a delivery deleted meanwhile (a user's erasure) is skipped, not an insert that
 * breaks the foreign key once that deletion commits. Returns `service_id`.
 */
export function attemptsLogSql(node: string, attempts: readonly LoggedAttempt[]): Sql {
  return named(
    `logged as (
       insert into delivery_attempts (delivery_id, service_id, attempt, started_at, duration_ms, status, error, outcome, next_attempt_at, node)
       select d.id, d.service_id, 1 + (select count(*) from delivery_attempts p where p.delivery_id = d.id), a.started_at,
              a.duration_ms, a.status, a.error, a.outcome, a.next_attempt_at, :node::text
         from unnest(:ids::uuid[], :startedAt::timestamptz[], :durationMs::int[], :status::int[], :error::text[], :outcome::text[],
                     :nextAttemptAt::timestamptz[])
              as a(id, started_at, duration_ms, status, error, outcome, next_attempt_at)
         join deliveries d on d.id = a.id
        where d.state = 'pending' and (a.outcome = 'delivered' or d.claimed_by = :node)
        order by d.id
          for key share of d
       returning service_id)`,
    {
      node,
      ids: pgUuidArray(attempts.map((r) => r.id)),
      startedAt: pgTextArray(attempts.map((r) => r.startedAt.toISOString())),
      durationMs: pgIntArray(attempts.map((r) => Math.max(0, Math.round(r.durationMs)))),
      status: statusesOf(attempts),
      error: pgTextArray(attempts.map((r) => r.error)),
      outcome: pgTextArray(attempts.map((r) => r.type)),
      nextAttemptAt: nextAttemptsOf(attempts),
    },
  );
}

/** The distinct Services of the logged attempts, ascending (a push has none): a select over `logged`. */
export const LOGGED_SERVICES = `select distinct service_id as "serviceId" from logged where service_id is not null order by 1`;

export interface LoggedServicesRow {
  serviceId: number;
}

/** The HTTP statuses as a text[] literal. */
export function statusesOf(attempts: ReadonlyArray<Pick<LoggedAttempt, 'status'>>): string {
  return pgTextArray(attempts.map((r) => (r.status === null ? null : String(r.status))));
}

/** When each is due again (retries only) as a text[] literal. */
export function nextAttemptsOf(attempts: ReadonlyArray<Pick<LoggedAttempt, 'nextAttemptAt'>>): string {
  return pgTextArray(attempts.map((r) => r.nextAttemptAt?.toISOString() ?? null));
}
