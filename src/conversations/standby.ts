// Standby Services (docs/decisions/switchboard.md): the Services of an account that hear of
// conversations they do not own, every one (`all`) or those they owned at some point
// (`participated`). Read in the transaction of the change, under the users' locks its writer
// holds, so the owner it is judged against is the one the change delivers to.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Transaction } from '../db/tx/transaction.ts';
import { prepared } from '../db/prepared.ts';
import { recordParticipantsSql } from './sql/record-participants.ts';
import { standbyServicesSql, toStandbyServices, type StandbyServicesRow } from './sql/standby-services.ts';

/** Each user's standby Services (not its owner), by user id; users without any are left out. */
export async function standbyServices(em: EntityManager | Transaction, userIds: readonly number[]): Promise<Map<number, number[]>> {
  if (userIds.length === 0) return new Map();
  return toStandbyServices(await prepared<StandbyServicesRow>(em, standbyServicesSql(userIds)));
}

/** One user's standby Services. */
export async function standbyOf(em: EntityManager | Transaction, userId: number): Promise<number[]> {
  return (await standbyServices(em, [userId])).get(userId) ?? [];
}

/** Records that these Services took part in the conversation (an owner change's old and new owner). */
export async function recordParticipants(em: EntityManager | Transaction, userId: number, serviceIds: readonly number[]): Promise<void> {
  await prepared(em, recordParticipantsSql(userId, serviceIds));
}
