// The users' standby Services (standby.ts): Services of their account that hear of conversations
// they do not own, every one (`all`) or those they owned at some point (`participated`).
import { named, type Sql } from '../../db/named.ts';
import { pgIntArray } from '../../db/pg-arrays.ts';

export interface StandbyServicesRow {
  userId: number;
  serviceId: number;
}

export function standbyServicesSql(userIds: readonly number[]): Sql {
  // The partial index on standby Services keeps this one probe per account when none listen.
  return named(
    `select u.id as "userId", s.id as "serviceId"
       from users u
       join services s on s.account_id = u.account_id and s.standby <> 'none' and s.id <> u.owner_service_id
      where u.id = any(:userIds::int[])
        and (s.standby = 'all'
             or exists (select 1 from conversation_participants p where p.user_id = u.id and p.service_id = s.id))
      order by u.id, s.id`,
    { userIds: pgIntArray([...new Set(userIds)]) },
  );
}

/** Each user's standby Services, ascending, by user id; users without any are left out. */
export function toStandbyServices(rows: readonly StandbyServicesRow[]): Map<number, number[]> {
  const found = new Map<number, number[]>();
  for (const { userId, serviceId } of rows) found.set(userId, [...(found.get(userId) ?? []), serviceId]);
  return found;
}
