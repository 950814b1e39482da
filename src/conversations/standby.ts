// Standby Services (docs/decisions/switchboard.md): the Services of an account that hear of
// conversations they do not own, every one (`all`) or those they owned at some point
// (`participated`). Read in the transaction of the change, under the users' locks its writer
// holds, so the owner it is judged against is the one the change delivers to.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Transaction } from '../db/tx/transaction.ts';
import { prepared } from '../db/prepared.ts';
import { pgIntArray } from '../db/pg-arrays.ts';

/** Each user's standby Services (not its owner), by user id; users without any are left out. */
export async function standbyServices(em: EntityManager | Transaction, userIds: readonly number[]): Promise<Map<number, number[]>> {
  const found = new Map<number, number[]>();
  if (userIds.length === 0) return found;
  // The partial index on standby Services keeps this one probe per account when none listen.
  const rows = await prepared<{ userId: number; serviceId: number }>(
    em,
    `select u.id as "userId", s.id as "serviceId"
       from users u
       join services s on s.account_id = u.account_id and s.standby <> 'none' and s.id <> u.owner_service_id
      where u.id = any(?::int[])
        and (s.standby = 'all'
             or exists (select 1 from conversation_participants p where p.user_id = u.id and p.service_id = s.id))
      order by u.id, s.id`,
    [pgIntArray([...new Set(userIds)])],
  );
  for (const { userId, serviceId } of rows) found.set(userId, [...(found.get(userId) ?? []), serviceId]);
  return found;
}

/** One user's standby Services. */
export async function standbyOf(em: EntityManager | Transaction, userId: number): Promise<number[]> {
  return (await standbyServices(em, [userId])).get(userId) ?? [];
}

/** Records that these Services took part in the conversation (an owner change's old and new owner). */
export async function recordParticipants(em: EntityManager | Transaction, userId: number, serviceIds: readonly number[]): Promise<void> {
  await prepared(
    em,
    `insert into conversation_participants (user_id, service_id)
     select ?::int, unnest(?::int[]) on conflict do nothing`,
    [userId, pgIntArray([...new Set(serviceIds)])],
  );
}
