// The devices the users' pushes go to (outbox.ts): push enabled, a token, and push settings of
// their account for their push type; each device's chain locked, in device order (as the worker
// takes them when a push completes).
import { named, type Sql } from '../../db/named.ts';
import { pgIntArray } from '../../db/pg-arrays.ts';

export interface PushDevicesRow {
  id: number;
  userId: number;
}

export function pushDevicesSql(userIds: readonly number[]): Sql {
  return named(
    `select v.id, v.user_id as "userId", pg_advisory_xact_lock(0, v.id)
       from (select d.id, d.user_id from devices d
              join push_settings p on p.account_id = d.account_id and p.push_type = d.push_type
             where d.user_id = any(:userIds::int[]) and d.push_enabled and d.push_token is not null
             order by d.id) v`,
    { userIds: pgIntArray(userIds) },
  );
}
