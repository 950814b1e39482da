// Messages of a conversation: writing them (with their delivery to the owner Service, in the
// same transaction) and reading them the way clients page through them.
import type { Transaction } from '../db/tx/transaction.ts';
import { transaction } from '../db/tx/run.ts';
import { prepared } from '../db/prepared.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  MessageSchema,
  MessageStatusValue,
  MessageType,
  type Account,
  type AgentSnapshot,
  type MediaReference,
  type Message,
  type MessageContent,
  type User,
} from '../db/entities/index.ts';
import { deliveriesCte, type DeliveriesCte } from '../deliveries/outbox.ts';
import type { Sql } from '../db/named.ts';
import { messagePayload } from '../presenters/webhook-payloads.ts';
import { notFound } from '../errors.ts';
import { notify } from './notices.ts';
import { standbyServices } from './standby.ts';
import { insertMessagesSql, toInsertedMessages, type InsertMessagesRow, type MessageInsertRow } from './sql/insert-messages.ts';
import { lockUsersForMessages, type LockedUser } from './users.ts';

/** What clients page through: everything but user system messages, which are signals for Services. */
const CLIENT_VISIBLE = { $ne: MessageType.userSystem } as const;

export interface UserMessageInput {
  typeId: typeof MessageType.user | typeof MessageType.userSystem;
  text: string | null;
  media: MediaReference | null;
  deviceId: number | null;
  requestUrl: string | null;
  /** The client's name for the message (see client-messages.ts), if it gave one. */
  clientMessageId?: string | null;
}

export interface NewMessage {
  message: Message;
  /**
   * The id of the conversation's previous client-visible message when this one was written:
   * the real-time gateway sends a message straight on only to a socket that has that one.
   */
  prevId: number | null;
}

type MessageFields = Pick<Message, 'deviceId' | 'typeId' | 'message' | 'media' | 'agent' | 'requestUrl'> & {
  /** The rich parts of an agent message (title, buttons, quick replies, carousel); null otherwise. */
  content: MessageContent | null;
  clientMessageId?: string | null;
};

export interface MessageRow extends MessageFields {
  userId: number;
}

export interface WrittenMessage extends NewMessage {
  user: LockedUser;
  /** With currentAgents (insertLocked): the user's current agent before the statement. */
  agentBefore?: AgentSnapshot | null;
}

export interface InsertOptions {
  /** The messages' ids, taken under the locks (lockUsersForMessages); else drawn by the insert. */
  ids?: readonly number[];
  createdAt?: Date;
  /** The messages' deliveries (outbox.ts), written by the same statement. */
  deliveries?: DeliveriesCte | null;
  /** The users' current agents set by the same statement (agent messages). */
  currentAgents?: Sql | null;
  /** The statement is the transaction's last: it carries the COMMIT (prepared()). */
  commit?: boolean;
}

/**
 * A login merge moves the anonymous conversation, messages and uploads, to the registered
 * user (both locked by the caller). Message ids grow with time, so the merged conversation
 * reads in time order by id.
 */
export async function moveConversation(em: EntityManager, fromUserId: number, toUserId: number): Promise<void> {
  const connection = em.getConnection();
  const trx: unknown = em.getTransactionContext();
  await connection.execute('update messages set user_id = ? where user_id = ?', [toUserId, fromUserId], 'run', trx);
  await connection.execute('update media set user_id = ? where user_id = ?', [toUserId, fromUserId], 'run', trx);
  // The team's side: the timeline follows the messages; the anonymous conversation's state
  // becomes the registered user's when that one has none (with the registered user's owner).
  await connection.execute('update conversation_events set user_id = ? where user_id = ?', [toUserId, fromUserId], 'run', trx);
  await connection.execute(
    `insert into conversation_states (user_id, account_id, owner_service_id, status, snoozed_until, assignee_operator_id,
                                      waiting_since, read_message_id, updated_at)
     select u.id, s.account_id, u.owner_service_id, s.status, s.snoozed_until, s.assignee_operator_id, s.waiting_since,
            s.read_message_id, now()
     from conversation_states s join users u on u.id = ? where s.user_id = ?
     on conflict (user_id) do nothing`,
    [toUserId, fromUserId],
    'run',
    trx,
  );
  await connection.execute('delete from conversation_states where user_id = ?', [fromUserId], 'run', trx);
}

/**
 * Locks the messages' users (with their owners' delivery chains) and takes the messages' ids,
 * inside the caller's transaction: `target[i]` is the live user row i's message goes to. A
 * message for a user merged meanwhile (its sender read the conversation just before a login
 * merged it) goes to the conversation it was merged into, like the rest of its history.
 */
async function lockForMessages(em: Transaction, rows: readonly MessageRow[]): Promise<{ target: LockedUser[]; ids: number[] }> {
  const first = await lockUsersForMessages(
    em,
    rows.map((r) => r.userId),
    rows.length,
  );
  const { users } = first;
  let { messageIds } = first;
  const missing = [...users.values()].flatMap((u) =>
    u.mergedIntoUserId !== null && !users.has(u.mergedIntoUserId) ? [u.mergedIntoUserId] : [],
  );
  // Registered users are never merged, so one step reaches the live conversation. The ids are
  // taken again under the new locks too (the first ones stay unused: ids have gaps anyway).
  if (missing.length > 0) {
    const more = await lockUsersForMessages(em, missing, rows.length);
    for (const [id, user] of more.users) users.set(id, user);
    messageIds = more.messageIds;
  }
  const target = rows.map((row) => {
    const user = users.get(row.userId);
    const live = user?.mergedIntoUserId != null ? users.get(user.mergedIntoUserId) : user;
    // Erased (GDPR) after its sender read the conversation: the caller's 404, as REST would answer.
    if (!live) throw notFound('user_not_found');
    return live;
  });
  return { target, ids: messageIds };
}

/**
 * Every message is written here, inside the caller's transaction and under a lock on its user
 * (taken by the caller: `target[i]` is row i's live user), so that one conversation's messages
 * get increasing ids in the order they commit. Set-based, so a group commit of many messages
 * costs one statement, as one message does.
 */
export async function insertLocked(
  em: Transaction,
  rows: readonly MessageRow[],
  target: readonly LockedUser[],
  options: InsertOptions = {},
): Promise<WrittenMessage[]> {
  const createdAt = options.createdAt ?? new Date();
  const deliveries = options.deliveries ?? null;
  const agents = options.currentAgents ?? null;
  // One statement after the locks (sql/insert-messages.ts).
  const [result] = await prepared<InsertMessagesRow>(
    em,
    insertMessagesSql({
      rows: insertRows(
        rows,
        target.map((user) => user.id),
        options.ids,
      ),
      createdAt,
      deliveries: deliveries?.cte ?? null,
      agents,
    }),
    { commit: options.commit ?? false },
  );
  const { ids, deliveries: written, agentsBefore } = toInsertedMessages(result);
  deliveries?.written(written);
  return rows.map((row, i): WrittenMessage => {
    const user = target[i] as LockedUser;
    const [id, prevId] = ids[i] ?? [];
    if (id === undefined || prevId === undefined) throw new Error('message not inserted');
    const message = messageOf(row, id, user.id, createdAt);
    return agentsBefore ? { message, prevId, user, agentBefore: agentsBefore.get(user.id) ?? null } : { message, prevId, user };
  });
}

/** The insert statement's rows (sql/insert-messages.ts): row n's message to `userIds[n]`, with id `ids[n]` if taken. */
export function insertRows(rows: readonly MessageRow[], userIds: readonly number[], ids?: readonly number[]): MessageInsertRow[] {
  return rows.map((row, n) => ({
    n,
    taken_id: ids?.[n] ?? null,
    user_id: userIds[n],
    device_id: row.deviceId,
    type_id: row.typeId,
    message: row.message,
    media: row.media,
    agent: row.agent,
    content: row.content,
    request_url: row.requestUrl,
    client_message_id: row.clientMessageId ?? null,
  }));
}

/**
 * A row as insertLocked writes it: available, in its live user's conversation. Field by field,
 * in one shape for every message: the spread of the row this was took 1% of the server's busy
 * time in a pipeline profile (docs/performance.md, What one message costs).
 */
export function messageOf(row: MessageRow, id: number, userId: number, createdAt: Date): Message {
  return {
    id,
    userId,
    deviceId: row.deviceId,
    typeId: row.typeId,
    message: row.message,
    media: row.media,
    agent: row.agent,
    content: row.content,
    requestUrl: row.requestUrl,
    clientMessageId: row.clientMessageId ?? null,
    status: MessageStatusValue.available,
    createdAt,
  };
}

export interface UserMessage {
  account: Pick<Account, 'id' | 'identification'>;
  user: Pick<User, 'id'>;
  input: UserMessageInput;
}

/**
 * Messages from the users' side (text, image, or a user system message), each delivered to its
 * owner: the users locked and the ids taken in one statement, then the messages and their
 * deliveries written in one more, which carries the COMMIT with `commit` (the caller's
 * transaction ends there: see prepared()).
 */
export async function recordUserMessages(
  em: Transaction,
  messages: readonly UserMessage[],
  { commit = false }: { commit?: boolean } = {},
): Promise<NewMessage[]> {
  if (messages.length === 0) return [];
  const rows = messages.map(userMessageRow);
  const { target, ids } = await lockForMessages(em, rows);
  const createdAt = new Date();
  // Judged under the locks, against the owners as locked (docs/decisions/switchboard.md); a
  // batch whose accounts have no standby Service (the lock statement said) needs no statement.
  const standby = await standbyServices(
    em,
    target.flatMap((user) => (user.standbyListens === false ? [] : [user.id])),
  );
  // The payloads as the messages will be written: with their ids, and their live users as locked.
  const deliveries = await deliveriesCte(
    em,
    rows.map((row, i) => {
      const user = target[i] as LockedUser;
      const message = messageOf(row, ids[i] as number, user.id, createdAt);
      return {
        kind: 'message' as const,
        payload: messagePayload(message, messages[i]?.account as UserMessage['account'], user),
        recipients: [user.ownerServiceId],
        standby: standby.get(user.id),
        orderingKey: user.id,
      };
    }),
  );
  const written = await insertLocked(em, rows, target, { ids, createdAt, deliveries, commit });
  return written.map(({ message, prevId }) => ({ message, prevId }));
}

/** A message from the user's side as a row to write. */
export function userMessageRow({ user, input }: UserMessage): MessageRow {
  return {
    userId: user.id,
    deviceId: input.deviceId,
    typeId: input.typeId,
    message: input.text,
    media: input.media,
    agent: null,
    content: null,
    requestUrl: input.requestUrl,
    clientMessageId: input.clientMessageId ?? null,
  };
}

/** One message from the user's side. */
export async function recordUserMessage(
  em: Transaction,
  account: Account,
  user: Pick<User, 'id'>,
  input: UserMessageInput,
): Promise<NewMessage> {
  const [recorded] = await recordUserMessages(em, [{ account, user, input }]);
  if (!recorded) throw new Error('no message recorded');
  return recorded;
}

export type Cursor = { kind: 'latest' } | { kind: 'before'; id: number } | { kind: 'after'; id: number };

/** Clients see their conversation without user system messages; Services see all of it. */
export type Audience = 'client' | 'service';

const typeFilter = (audience: Audience) => (audience === 'client' ? { typeId: CLIENT_VISIBLE } : {});

/** Newest first. `after` pages take the messages right after the id, so a client can catch up in order. */
export async function listMessages(
  em: EntityManager,
  userId: number,
  cursor: Cursor,
  limit: number,
  audience: Audience = 'client',
): Promise<Message[]> {
  if (cursor.kind === 'after') {
    const rows = await em.find(
      MessageSchema,
      { userId, ...typeFilter(audience), id: { $gt: cursor.id } },
      { orderBy: { id: 'asc' }, limit },
    );
    return rows.reverse();
  }
  return em.find(
    MessageSchema,
    { userId, ...typeFilter(audience), ...(cursor.kind === 'before' ? { id: { $lt: cursor.id } } : {}) },
    { orderBy: { id: 'desc' }, limit },
  );
}

async function hasOlderMessages(em: EntityManager, userId: number, id: number, audience: Audience): Promise<boolean> {
  return (await em.count(MessageSchema, { userId, ...typeFilter(audience), id: { $lt: id } })) > 0;
}

export interface MessagePage {
  /** Newest first. */
  rows: Message[];
  /** The oldest id of the page when older messages exist (the cursor for the next page), else null. */
  olderThan: number | null;
}

/** One page of a conversation, and whether there is more before it: what every API pages with. */
export async function messagePage(
  em: EntityManager,
  userId: number,
  cursor: Cursor,
  limit: number,
  audience: Audience = 'client',
): Promise<MessagePage> {
  const rows = await listMessages(em, userId, cursor, limit, audience);
  const oldest = rows[rows.length - 1];
  const older = oldest ? await hasOlderMessages(em, userId, oldest.id, audience) : false;
  return { rows, olderThan: older && oldest ? oldest.id : null };
}

export async function findMessage(em: EntityManager, userId: number, id: number): Promise<Message | null> {
  return em.findOne(MessageSchema, { id, userId, typeId: CLIENT_VISIBLE });
}

/** Agent messages the user has not seen yet (status below 4). */
export async function unseenAgentMessages(em: EntityManager, userId: number): Promise<number[]> {
  const rows = await em.find(
    MessageSchema,
    { userId, typeId: MessageType.agent, status: { $lt: MessageStatusValue.seen } },
    { orderBy: { id: 'asc' }, fields: ['id'] },
  );
  return rows.map((m) => m.id);
}

/**
 * Raises the status of the caller's own messages (2 available → 3 received → 4 seen; never
 * lowered). All or nothing: returns null, changing nothing, if an id is not in the conversation.
 */
export async function raiseStatus(em: EntityManager, userId: number, ids: number[], status: 2 | 3 | 4): Promise<Message[] | null> {
  return transaction(em, async (tx) => {
    const unique = [...new Set(ids)];
    const messages = await tx.em.find(MessageSchema, { id: { $in: unique }, userId });
    if (messages.length !== unique.length) return null;
    for (const message of messages) {
      if (message.status < status) message.status = status;
    }
    notify(tx, { kind: 'messageStatus', userId, messages: messages.map((m) => ({ id: m.id, status: m.status })) });
    return messages;
  });
}
