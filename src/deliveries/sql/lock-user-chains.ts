// The email chains of users (outbox.ts): Service 0 with the negated user id as the ordering key,
// in ascending key order. A statement of its own, as for pushes: the insert's snapshot must show
// whatever a completion that held a chain lock committed, or a new row could miss the promotion.
import { named, type Sql } from '../../db/named.ts';
import { pgIntArray } from '../../db/pg-arrays.ts';

/** No rows worth reading. */
export function lockUserChainsSql(keys: readonly number[]): Sql {
  return named(`select pg_advisory_xact_lock(0, c.key) from (select unnest(:keys::int[]) as key order by 1) c`, {
    keys: pgIntArray(keys),
  });
}
