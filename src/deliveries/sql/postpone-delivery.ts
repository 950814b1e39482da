// An email whose customer is connected (claims.ts): asked again at `at`, the attempt not counted.
import { named, type Sql } from '../../db/named.ts';
import { UNLEASED } from '../lease.ts';

export interface PostponeDeliveryValues {
  node: string;
  id: string;
  at: Date;
  reason: string;
}

/** No rows. */
export function postponeDeliverySql({ node, id, at, reason }: PostponeDeliveryValues): Sql {
  return named(
    `update deliveries set ${UNLEASED}, attempts = attempts - 1, next_attempt_at = :at::timestamptz, last_error = :reason,
            updated_at = now()
     where id = :id and claimed_by = :node and state = 'pending'`,
    { at: at.toISOString(), reason, id, node },
  );
}
