// Services that took part in a conversation (standby.ts): an owner change's old and new owner.
import { named, type Sql } from '../../db/named.ts';
import { pgIntArray } from '../../db/pg-arrays.ts';

/** No rows. */
export function recordParticipantsSql(userId: number, serviceIds: readonly number[]): Sql {
  return named(
    `insert into conversation_participants (user_id, service_id)
     select :userId::int, unnest(:serviceIds::int[]) on conflict do nothing`,
    { userId, serviceIds: pgIntArray([...new Set(serviceIds)]) },
  );
}
