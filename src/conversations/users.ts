// Chat users: anonymous ones (one device, no identifier) and registered ones (known by the
// uniqueIdentifier a customer's backend put in the authorization header), and the row lock
// every statement on a conversation runs under.
import { Transaction } from '../db/tx/transaction.ts';
import { prepared } from '../db/prepared.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UserSchema, type Account, type AgentSnapshot, type User } from '../db/entities/index.ts';
import { pgIntArray } from '../db/pg-arrays.ts';
import { AppError, conflict } from '../errors.ts';
import { chainLockSql } from '../deliveries/outbox.ts';
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
export interface LockedUser extends Pick<User, 'id' | 'accountId' | 'ownerServiceId' | 'uniqueIdentifier' | 'additionalInformation'> {
  mergedIntoUserId: number | null;
  /** Whether a device of the user can receive pushes (read when asked for: lockUsers' pushDevices). */
  pushDevices?: boolean;
  /** Whether answers can be emailed to the user: an address, not unsubscribed (read with pushDevices). */
  emailable?: boolean;
  /**
   * Whether a Service of the user's account listens on standby at all (read with the message
   * ids: lockUsersForMessages); when none does, the writer spends no statement on standby.ts.
   */
  standbyListens?: boolean;
}

interface UserRow {
  id: number;
  account_id: number;
  owner_service_id: number;
  unique_identifier: string | null;
  additional_information: Record<string, unknown> | null;
  merged_into_user_id: number | null;
  push_devices?: boolean;
  emailable?: boolean;
  standby_listens?: boolean;
}

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
  // With pushDevices: whether a device of the user can be pushed to, as enqueuePushes selects them
  // (outbox.ts), so that a writer of messages for users with none spends no statement on pushes.
  const pushable = pushDevices
    ? `, exists (select 1 from devices d join push_settings p on p.account_id = d.account_id and p.push_type = d.push_type
                 where d.user_id = users.id and d.push_enabled and d.push_token is not null) as push_devices,
       (users.email is not null and users.email_unsubscribed_at is null) as emailable`
    : '';
  const columns = 'id, account_id, owner_service_id, unique_identifier, additional_information, merged_into_user_id';
  // Sorting needs every row, so every row lock is taken before the first chain lock, and
  // PostgreSQL evaluates a volatile function of the select list after the sort. The ids are
  // drawn once the count over every locked row is known, that is once every row lock is held.
  // With the ids, whether the account has a standby Service at all (the partial index on them: one
  // probe per user). Which ones hear the message (standby.ts) depends on the owner and on the
  // owners the conversation had, so it is judged by a statement of its own, after the locks;
  // whether any listens does not depend on the user, and a Service switched to standby just now
  // is no different from one switched a moment later.
  const reserved =
    messageIds > 0
      ? `, (select array_agg(i.id order by i.id) from (
             select nextval(pg_get_serial_sequence('messages', 'id')) as id
             from generate_series(1, ?::int) where (select count(*) from locked) >= 0) i) as message_ids,
           exists (select 1 from services s where s.account_id = locked.account_id and s.standby <> 'none') as standby_listens`
      : '';
  const sql = ownerChains
    ? `with locked as materialized (select ${columns} from users where id = any(?::int[]) order by id for update)
       select ${columns}, ${chainLockSql('owner_service_id', 'id')}${reserved} from locked order by owner_service_id, id`
    : `select ${columns}${pushable} from users where id = any(?::int[]) order by id for update`;
  const params: unknown[] = [pgIntArray([...new Set(ids)].sort((a, b) => a - b))];
  if (reserved) params.push(messageIds);
  const rows = await prepared<UserRow & { message_ids?: Array<string | number> }>(em, sql, params);
  if (ownerChains && em instanceof Transaction) em.chainsLocked(rows.map((r) => [r.owner_service_id, r.id]));
  const users = new Map(
    rows.map((r): [number, LockedUser] => [
      r.id,
      {
        id: r.id,
        accountId: r.account_id,
        ownerServiceId: r.owner_service_id,
        uniqueIdentifier: r.unique_identifier,
        additionalInformation: r.additional_information,
        mergedIntoUserId: r.merged_into_user_id,
        ...(r.push_devices === undefined ? {} : { pushDevices: r.push_devices }),
        ...(r.emailable === undefined ? {} : { emailable: r.emailable }),
        ...(r.standby_listens === undefined ? {} : { standbyListens: r.standby_listens }),
      },
    ]),
  );
  return { users, messageIds: (rows[0]?.message_ids ?? []).map(Number) };
}

/** A CTE of the statement that writes agent messages (messages.ts, insertLocked). */
export interface CurrentAgentsCte {
  sql: string;
  params: unknown[];
}

/** The CTE's name: one row per user, `id` and `before`, its current agent before the statement. */
export const CURRENT_AGENTS_OUT = 'agents_set';

/**
 * Each user's agent becomes its current one and its agent typing ends (an agent message is
 * written in the same statement, under the users' locks); the CTE answers each user's current
 * agent from before.
 */
export function currentAgentsCte(agents: ReadonlyMap<number, AgentSnapshot>): CurrentAgentsCte {
  return {
    sql: `${CURRENT_AGENTS_OUT} as (
       update users u set current_agent = v.agent, agent_typing = null, agent_typing_until = null, updated_at = now()
       from (select o.id, o.current_agent as before, v.agent
             from jsonb_to_recordset(?::jsonb) as v(user_id int, agent jsonb) join users o on o.id = v.user_id) v
       where u.id = v.id
       returning u.id, v.before)`,
    params: [JSON.stringify([...agents].map(([userId, agent]) => ({ user_id: userId, agent })))],
  };
}
