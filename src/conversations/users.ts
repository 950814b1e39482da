// Chat users: anonymous ones (one device, no identifier) and registered ones (known by the
// uniqueIdentifier a customer's backend put in the authorization header), and the row lock
// every statement on a conversation runs under.
import { Transaction } from '../db/tx/transaction.ts';
import { prepared } from '../db/prepared.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UserSchema, type Account, type AgentSnapshot, type User } from '../db/entities/index.ts';
import { Sql } from '../db/named.ts';
import { pgIntArray } from '../db/pg-arrays.ts';
import { AppError, conflict } from '../errors.ts';
import { lockUsersSql, toLockedUsers, type LockedUser, type LockUsersRow } from './sql/lock-users.ts';
import { customerLock, lockName } from './locks.ts';

export function ownerFor(account: Account): number {
  if (account.defaultServiceId == null) throw conflict('account_has_no_service');
  return account.defaultServiceId;
}

/** A merged anonymous id is a tombstone: callers are told the id the conversation lives on under. */
export function refuseMerged(user: Pick<User, 'mergedIntoUserId'>): void {
  if (user.mergedIntoUserId != null) throw new AppError(409, 'user_merged', [], { userId: user.mergedIntoUserId });
}

export function createAnonymousUser(em: EntityManager, account: Account, info: Record<string, unknown> | null): User {
  return em.create(UserSchema, {
    accountId: account.id,
    kind: 'anonymous',
    uniqueIdentifier: null,
    additionalInformation: info,
    ownerServiceId: ownerFor(account),
    currentAgent: null,
    agentTyping: null,
    agentTypingUntil: null,
    mergedIntoUserId: null,
  });
}

export type RegisteredDefaults = Partial<Pick<User, 'ownerServiceId' | 'currentAgent' | 'additionalInformation'>>;

/**
 * The registered user with this identifier, or null. Takes the customer's name lock, held to
 * the end of the transaction: a user the caller then creates (createRegisteredUser) is the only one.
 */
export async function findRegisteredUser(em: EntityManager, account: Account, uniqueIdentifier: string): Promise<User | null> {
  await lockName(em, customerLock(account.id, uniqueIdentifier));
  return em.findOne(UserSchema, { accountId: account.id, uniqueIdentifier });
}

/** After findRegisteredUser found none, in the same transaction. */
export async function createRegisteredUser(
  em: EntityManager,
  account: Account,
  uniqueIdentifier: string,
  defaults: RegisteredDefaults,
): Promise<User> {
  const user = em.create(UserSchema, {
    accountId: account.id,
    kind: 'registered',
    uniqueIdentifier,
    additionalInformation: defaults.additionalInformation ?? null,
    ownerServiceId: defaults.ownerServiceId ?? ownerFor(account),
    currentAgent: defaults.currentAgent ?? null,
    agentTyping: null,
    agentTypingUntil: null,
    mergedIntoUserId: null,
  });
  await em.flush();
  return user;
}

/** The user a message was written to, as it stood under the lock: what its delivery needs. */
export type { LockedUser } from './sql/lock-users.ts';

/**
 * Locks the users (in id order, so two writers never wait on each other in a cycle); absent ones
 * are left out. With `ownerChains`, the same statement then takes the delivery chain lock of
 * each user's owner Service (outbox.ts), in the outbox's order, so that a writer of messages
 * and their deliveries spends no statement of its own on them.
 */
export async function lockUsers(
  em: EntityManager | Transaction,
  ids: readonly number[],
  { ownerChains = false, pushDevices = false }: { ownerChains?: boolean; pushDevices?: boolean } = {},
): Promise<Map<number, LockedUser>> {
  return (await lock(em, ids, ownerChains, 0, pushDevices)).users;
}

/**
 * lockUsers with the owners' chain locks, and `count` message ids taken from the sequence in
 * the same statement once every row lock is held: a conversation's ids still grow in the
 * order its messages commit, and the messages' deliveries (whose payloads carry the ids) can
 * be written in the statement that writes the messages.
 */
export async function lockUsersForMessages(
  em: Transaction,
  ids: readonly number[],
  count: number,
): Promise<{ users: Map<number, LockedUser>; messageIds: number[] }> {
  return lock(em, ids, true, count);
}

async function lock(
  em: EntityManager | Transaction,
  ids: readonly number[],
  ownerChains: boolean,
  messageIds: number,
  pushDevices = false,
): Promise<{ users: Map<number, LockedUser>; messageIds: number[] }> {
  const rows = await prepared<LockUsersRow>(em, lockUsersSql({ ids, ownerChains, messageIds, pushDevices }));
  if (ownerChains && em instanceof Transaction) em.chainsLocked(rows.map((r) => [r.owner_service_id, r.id]));
  return toLockedUsers(rows);
}

/** The CTE's name: one row per user, `id` and `before`, its current agent before the statement. */
export const CURRENT_AGENTS_OUT = 'agents_set';

/**
 * Each user's agent becomes its current one and its agent typing ends (an agent message is
 * written in the same statement, under the users' locks); the CTE answers each user's current
 * agent from before. `checked`: only if the statement's check passed (insert-messages.ts); then
 * each user is looked up by its key (the lateral's limit, and the ids as an array for the
 * updated rows): that statement's generic plan, made for a list of unknown length, joined the
 * list to the whole users table while it held a few thousand users.
 */
export function currentAgentsCte(agents: ReadonlyMap<number, AgentSnapshot>, checked = false): Sql {
  const list = JSON.stringify([...agents].map(([userId, agent]) => ({ user_id: userId, agent })));
  const update = `update users u set current_agent = v.agent, agent_typing = null, agent_typing_until = null, updated_at = now()`;
  if (!checked) {
    return new Sql(
      `${CURRENT_AGENTS_OUT} as (
       ${update}
       from (select o.id, o.current_agent as before, v.agent
             from jsonb_to_recordset(?::jsonb) as v(user_id int, agent jsonb) join users o on o.id = v.user_id) v
       where u.id = v.id
       returning u.id, v.before)`,
      [list],
    );
  }
  return new Sql(
    `${CURRENT_AGENTS_OUT} as (
       ${update}
       from (select o.id, o.before, v.agent
             from jsonb_to_recordset(?::jsonb) as v(user_id int, agent jsonb)
             cross join lateral (select o.id, o.current_agent as before from users o where o.id = v.user_id limit 1) o) v
       where u.id = any(?::int[]) and u.id = v.id and (select ok from verdict)
       returning u.id, v.before)`,
    [list, pgIntArray([...agents.keys()])],
  );
}
