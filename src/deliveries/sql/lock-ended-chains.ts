// The chain locks of deliveries about to end (outcomes.ts), in ascending order as the outbox takes
// them, by a statement of their own: the next statement's snapshot then shows whatever an
// enqueue that held them committed.
import { named, type Sql } from '../../db/named.ts';
import { pgUuidArray } from '../../db/pg-arrays.ts';

/** No rows worth reading. */
export function lockEndedChainsSql(ids: readonly string[]): Sql {
  return named(
    `select pg_advisory_xact_lock(service_id, ordering_key)
       from (select distinct coalesce(service_id, 0) as service_id, ordering_key from deliveries
              where id = any(:ids::uuid[]) and ordering_key is not null
              order by service_id, ordering_key) chains`,
    { ids: pgUuidArray(ids) },
  );
}
