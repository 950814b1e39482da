// Reads of chat users and their devices that routes need around a command: the user of a path
// within its account, the users a page of rows names, the devices shown beside a conversation.
import type { EntityManager } from '@mikro-orm/postgresql';
import { DeviceSchema, UserSchema, type Device, type User } from '../db/entities/index.ts';

/** The user, if it is one of the account's (an id of another account is as unknown as a missing one). */
export function findAccountUser(em: EntityManager, accountId: number, userId: number): Promise<User | null> {
  return em.findOne(UserSchema, { id: userId, accountId });
}

/** The users of these ids, by id. */
export async function usersById(em: EntityManager, ids: readonly number[]): Promise<Map<number, User>> {
  if (ids.length === 0) return new Map();
  return new Map((await em.find(UserSchema, { id: { $in: [...ids] } })).map((u) => [u.id, u] as const));
}

/** The user's newest devices, newest first. */
export function recentDevices(em: EntityManager, accountId: number, userId: number, limit: number): Promise<Device[]> {
  return em.find(DeviceSchema, { accountId, userId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
}
