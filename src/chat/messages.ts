// Messages of a conversation: writing them (with their delivery to the owner Service, in the
// same transaction) and reading them the way clients page through them.
import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { MessageSchema, UserSchema, type Account, type MediaReference, type Message, type User } from '../db/entities/index.ts';
import { enqueue } from '../deliveries/outbox.ts';
import { messagePayload } from '../presenters/webhook-payloads.ts';

/** What clients page through: everything but user system messages, which are signals for Services. */
const CLIENT_VISIBLE = { $ne: 4 } as const;

export interface UserMessageInput {
  typeId: 1 | 4;
  text: string | null;
  media: MediaReference | null;
  deviceId: number | null;
  requestUrl: string | null;
}

export interface NewMessage {
  message: Message;
  /**
   * The id of the conversation's previous client-visible message when this one was written:
   * the real-time gateway sends a message straight on only to a socket that has that one.
   */
  prevId: number | null;
}

type MessageFields = Pick<Message, 'deviceId' | 'typeId' | 'message' | 'media' | 'agent' | 'requestUrl'>;

/**
 * Every message is written here, inside the caller's transaction and under a lock on its
 * user, so that one conversation's messages get increasing ids in the order they commit.
 */
export async function insertMessage(em: EntityManager, userId: number, fields: MessageFields): Promise<NewMessage & { user: User }> {
  const user = await em.findOneOrFail(UserSchema, { id: userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  const previous = await em.findOne(
    MessageSchema,
    { userId, typeId: CLIENT_VISIBLE },
    { orderBy: { id: 'desc' }, fields: ['id'] },
  );
  const message = em.create(MessageSchema, { userId, status: 2, ...fields });
  await em.flush();
  return { message, prevId: previous?.id ?? null, user };
}

/** A message from the user's side (text, image, or a user system message), delivered to the owner. */
export async function recordUserMessage(
  em: EntityManager,
  account: Account,
  user: User,
  input: UserMessageInput,
): Promise<NewMessage> {
  const created = await insertMessage(em, user.id, {
    deviceId: input.deviceId,
    typeId: input.typeId,
    message: input.text,
    media: input.media,
    agent: null,
    requestUrl: input.requestUrl,
  });
  await enqueue(em, {
    kind: 'message',
    payload: messagePayload(created.message, account, user),
    recipients: [user.ownerServiceId],
    orderingKey: user.id,
  });
  return { message: created.message, prevId: created.prevId };
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
    { userId, typeId: 2, status: { $lt: 4 } },
    { orderBy: { id: 'asc' }, fields: ['id'] },
  );
  return rows.map((m) => m.id);
}

/**
 * Raises the status of the caller's own messages (2 available → 3 received → 4 seen; never
 * lowered). All or nothing: returns null, changing nothing, if an id is not in the conversation.
 */
export async function raiseStatus(
  em: EntityManager,
  userId: number,
  ids: number[],
  status: 2 | 3 | 4,
): Promise<Message[] | null> {
  return em.transactional(async (tx) => {
    const unique = [...new Set(ids)];
    const messages = await tx.find(MessageSchema, { id: { $in: unique }, userId });
    if (messages.length !== unique.length) return null;
    for (const message of messages) {
      if (message.status < status) message.status = status;
    }
    return messages;
  });
}
