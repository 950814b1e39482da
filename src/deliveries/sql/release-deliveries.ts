// Leases given back with the next attempt due (outcomes.ts): at `nextAttemptAt` for a retry, at
// once for a 410. With `log` (no delivery of the batch ended), the attempts are logged by this
// statement, and it returns their Services (LoggedServicesRow); otherwise no rows.
import { named, type Sql } from '../../db/named.ts';
import { pgTextArray, pgUuidArray } from '../../db/pg-arrays.ts';
import { UNLEASED } from '../lease.ts';
import { LOGGED_SERVICES, nextAttemptsOf, statusesOf, type LoggedAttempt } from './attempts-log.ts';

export interface ReleaseDeliveriesValues {
  node: string;
  released: ReadonlyArray<Pick<LoggedAttempt, 'id' | 'status' | 'error' | 'nextAttemptAt'>>;
  /** The `logged` CTE (attempts-log.ts), when this statement logs the batch's attempts. */
  log: Sql | null;
}

export function releaseDeliveriesSql({ node, released, log }: ReleaseDeliveriesValues): Sql {
  const update = named(
    `update deliveries d
        set next_attempt_at = coalesce(r.next_attempt_at, now()), ${UNLEASED}, last_status = r.status, last_error = r.error,
            updated_at = now()
       from unnest(:ids::uuid[], :nextAttemptAt::timestamptz[], :status::int[], :error::text[]) as r(id, next_attempt_at, status, error)
      where d.id = r.id and d.state = 'pending' and d.claimed_by = :node`,
    {
      ids: pgUuidArray(released.map((r) => r.id)),
      nextAttemptAt: nextAttemptsOf(released),
      status: statusesOf(released),
      error: pgTextArray(released.map((r) => r.error)),
      node,
    },
  );
  return log ? named(`with :log, released as (:update returning d.id) ${LOGGED_SERVICES}`, { log, update }) : update;
}
