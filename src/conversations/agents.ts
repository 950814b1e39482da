// The agent side of a conversation: messages from an agent (which make that agent the
// conversation's current agent; group-committed), unsetting the current agent (Service API
// 2.3.0) and agent typing.
import type { Transaction } from '../db/tx/transaction.ts';
import { transaction } from '../db/tx/run.ts';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  UserSchema,
  type AgentSnapshot,
  type CarouselItem,
  type MessageButton,
  type MessageContent,
  MessageType,
  type User,
} from '../db/entities/index.ts';
import { enqueueEmails, enqueuePushes } from '../deliveries/outbox.ts';
import { AppError, notFound } from '../errors.ts';
import { pushEventPayload, pushMessagePayload } from '../presenters/push-payload.ts';
import { messageNotice, notify } from './notices.ts';
import { prepared } from '../db/prepared.ts';
import { GroupCommit, type AtOnce, type GroupCommitOptions, type Written } from '../db/tx/group-commit.ts';
import { insertLocked, insertRows, messageOf, type MessageRow, type NewMessage, type WrittenMessage } from './messages.ts';
import { answerableAtOnceSql } from './sql/answerable-at-once.ts';
import { LockedWay } from './locked-way.ts';
import { insertMessagesSql, toInsertedMessages, type InsertMessagesRow } from './sql/insert-messages.ts';
import { mediaOfConversation } from './media.ts';
import { currentAgentsCte, lockUsers, refuseMerged, type LockedUser } from './users.ts';
import { typingUntilSeconds } from './typing.ts';

export interface AgentMessageInput {
  /** The calling Service's account: a user of another account is not found. */
  accountId: number;
  userId: number;
  agent: AgentSnapshot;
  /** 2 agent message, 5 agent system message. */
  typeId: typeof MessageType.agent | typeof MessageType.agentSystem;
  text: string | null;
  /** An upload of this conversation. */
  media: MediaChoice | null;
  /** Title, buttons, quick replies, carousel; null when the message has none of them. */
  content?: AgentContentInput | null | undefined;
}

type MediaChoice = { id: string; description?: string | null | undefined };

/** The rich parts as a Service sends them: a carousel item's media is an upload of this conversation too. */
export interface AgentContentInput {
  title: string | null;
  buttons: MessageButton[];
  quickReplies: string[];
  carousel: Array<Omit<CarouselItem, 'media'> & { media: MediaChoice | null }>;
}

export type AgentMessage = NewMessage & {
  /** Whether this message made its agent the current one (the one before was another, or none). */
  agentChanged: boolean;
};

/** One writer per node: concurrent agent messages share transactions (group-commit.ts). */
export type AgentMessageWriter = GroupCommit<AgentMessageInput, AgentMessage>;

export interface AgentWriterOptions {
  /** Answers by email (email.unseenAfterSeconds), or null while email is off (no `email.smtp`). */
  email: { unseenAfterSeconds: number } | null;
  /** The database is one session (the embedded one): batches are written in one statement where they can be. */
  oneSession: boolean;
}

export function agentMessageWriter(
  options: Omit<GroupCommitOptions<AgentMessageInput, AgentMessage>, 'name' | 'write' | 'atOnce'> & AgentWriterOptions,
): AgentMessageWriter {
  const { email, oneSession, ...rest } = options;
  /** Users found with a device to push to or an address to email: their answers are written the locked way. */
  const reached = new LockedWay();
  return new GroupCommit({
    ...rest,
    name: 'agent',
    write: (tx, batch) => writeAgentMessages(tx, batch, email),
    ...(oneSession ? { atOnce: (batch: readonly AgentMessageInput[]) => agentMessagesAtOnce(batch, email, reached) } : {}),
  });
}

/**
 * The batch in one statement, on the embedded database (as client messages are,
 * messages-at-once.ts): without the locks first, the statement checks that every user can take
 * its message as the locked way would write it, with nothing more to write (sql/answerable-at-once.ts),
 * and writes the messages and the current agents. Null for a batch with an upload to check, or
 * a user found reached by pushes or emails within the minute (locked-way.ts); a failed check
 * writes nothing, and the batch goes the locked way, which refuses, pushes and emails as due.
 */
function agentMessagesAtOnce(
  batch: readonly AgentMessageInput[],
  email: AgentWriterOptions['email'],
  reached: LockedWay,
): AtOnce<AgentMessage> | null {
  const now = Date.now();
  const locked = (input: AgentMessageInput) =>
    input.media !== null || input.content?.carousel.some((item) => item.media !== null) || reached.has(input.userId, now);
  if (batch.some(locked)) return null;
  return async (tx) => {
    const createdAt = new Date();
    const rows: MessageRow[] = [];
    for (const input of batch) {
      // No statement: the content has no upload to check.
      const content = input.content ? await resolveContent(tx, input.userId, input.content) : null;
      rows.push(agentRow(input, null, content));
    }
    const [result] = await prepared<InsertMessagesRow>(
      tx,
      insertMessagesSql({
        rows: insertRows(
          rows,
          batch.map((input) => input.userId),
        ),
        createdAt,
        deliveries: null,
        agents: currentAgentsCte(new Map(batch.map((input) => [input.userId, input.agent])), true),
        check: answerableAtOnceSql(
          batch.map((input) => ({
            user_id: input.userId,
            account_id: input.accountId,
            emailed: email !== null && input.typeId === MessageType.agent,
          })),
        ),
      }),
      { commit: true },
    );
    if (result?.ok !== true) {
      reached.keep(result?.reached ?? [], now);
      return 'check failed';
    }
    const { ids, agentsBefore } = toInsertedMessages(result);
    const outcomes: Array<Written<AgentMessage>> = [];
    answered(
      tx,
      batch.map((input, at) => {
        const [id, prevId] = ids[at] ?? [];
        if (id === undefined || prevId === undefined) throw new Error('agent message not written');
        const message = messageOf(rows[at] as MessageRow, id, input.userId, createdAt);
        return { at, input, user: { id: input.userId }, message, prevId, agentBefore: agentsBefore?.get(input.userId) ?? null };
      }),
      outcomes,
    );
    return outcomes;
  };
}

/** A Service's message as a row to write. */
function agentRow(input: AgentMessageInput, media: MessageRow['media'], content: MessageContent | null): MessageRow {
  return {
    userId: input.userId,
    deviceId: null,
    typeId: input.typeId,
    // Rich messages may carry text and media together (title, image, text and buttons).
    message: input.text,
    media,
    content,
    // A snapshot: the message keeps the agent it was sent by, whatever happens to the current one.
    agent: input.agent,
    requestUrl: null,
  };
}

async function writeAgentMessages(
  tx: Transaction,
  batch: readonly AgentMessageInput[],
  email: AgentWriterOptions['email'],
): Promise<Array<Written<AgentMessage>>> {
  // The users are checked under their locks, so no merge can slip in between check and insert.
  const users = await lockUsers(
    tx,
    batch.map((input) => input.userId),
    { pushDevices: true },
  );
  const outcomes: Array<Written<AgentMessage>> = [];
  const accepted: Array<{ at: number; input: AgentMessageInput; user: LockedUser; row: MessageRow }> = [];
  for (const [at, input] of batch.entries()) {
    try {
      const user = users.get(input.userId);
      if (!user || user.accountId !== input.accountId) throw notFound('user_not_found');
      // A merged anonymous id: the Service must talk to the new user id.
      refuseMerged(user);
      const media = input.media ? await mediaOfConversation(tx, input.userId, input.media) : null;
      const content = input.content ? await resolveContent(tx, input.userId, input.content) : null;
      accepted.push({ at, input, user, row: agentRow(input, media, content) });
    } catch (err) {
      // A refusal is the caller's alone; anything else aborts the transaction.
      if (!(err instanceof AppError)) throw err;
      outcomes[at] = { ok: false, error: err };
    }
  }
  if (accepted.length === 0) return outcomes;
  // In the statement that writes the messages, under the same locks: each conversation's last
  // agent becomes its current one, and a sent message ends its typing. It is the batch's last
  // statement (it carries the COMMIT) unless pushes or emails follow.
  const pushing = accepted.some(({ user }) => user.pushDevices);
  // Answers (typeId 2) to users with an address: agent system messages are not worth an email.
  const emailing = email !== null && accepted.some(({ user, input }) => user.emailable && input.typeId === MessageType.agent);
  const written = await insertLocked(
    tx,
    accepted.map((a) => a.row),
    accepted.map((a) => a.user),
    {
      currentAgents: currentAgentsCte(new Map(accepted.map(({ input }) => [input.userId, input.agent]))),
      commit: !pushing && !emailing,
    },
  );
  const sent = accepted.map((item, i) => {
    const message = written[i];
    if (!message) throw new Error('agent message not written');
    return { ...item, ...message };
  });
  // The apps' only live channel: every agent message (system ones too, which an open chat shows)
  // is pushed to the user's devices, in this transaction. Users without such devices cost no statement.
  if (pushing) {
    await enqueuePushes(
      tx,
      sent.flatMap(({ input, message, user }) =>
        user.pushDevices
          ? [{ kind: 'push_message' as const, userId: input.userId, payload: pushMessagePayload(message, input.accountId) }]
          : [],
      ),
      { commit: !emailing },
    );
  }
  // Answers by email: one delivery per user of the batch, due when the answer has gone unseen
  // for a while; at send time it re-checks seen and connected, and collects the burst.
  if (emailing) {
    await enqueueEmails(
      tx,
      sent.flatMap(({ input, user, message }) =>
        user.emailable && input.typeId === MessageType.agent ? [{ userId: input.userId, throughMessageId: message.id }] : [],
      ),
      { notBeforeSeconds: email.unseenAfterSeconds, commit: true },
    );
  }
  answered(tx, sent, outcomes);
  return outcomes;
}

/** The written messages' outcomes, in order, and their notices: the message, and the current agent when it changed. */
function answered(
  tx: Transaction,
  sent: ReadonlyArray<
    { at: number; input: AgentMessageInput; user: Pick<LockedUser, 'id'> } & Pick<WrittenMessage, 'message' | 'prevId' | 'agentBefore'>
  >,
  outcomes: Array<Written<AgentMessage>>,
): void {
  // Whether each message changed the current agent decides its `agent` push.
  const current = new Map(sent.map(({ user, agentBefore }) => [user.id, agentBefore ?? null]));
  for (const { at, input, message, prevId } of sent) {
    const agentChanged = !sameAgent(current.get(input.userId) ?? null, input.agent);
    current.set(input.userId, input.agent);
    outcomes[at] = { ok: true, value: { message, prevId, agentChanged } };
    notify(tx, messageNotice(message, prevId));
    // Sockets hear of the current agent when it changes, not with every message of the same agent.
    if (agentChanged) notify(tx, { kind: 'agent', userId: input.userId, agent: input.agent });
  }
}

/** The stored rich parts: each carousel item's media checked to be an upload of the conversation. */
async function resolveContent(tx: Transaction, userId: number, input: AgentContentInput): Promise<MessageContent | null> {
  const carousel: CarouselItem[] = [];
  for (const item of input.carousel) {
    const media = item.media ? await mediaOfConversation(tx, userId, item.media) : null;
    carousel.push({ message: item.message, title: item.title, media, buttons: item.buttons });
  }
  const content: MessageContent = { title: input.title, buttons: input.buttons, quickReplies: input.quickReplies, carousel };
  const empty = content.title === null && content.buttons.length === 0 && content.quickReplies.length === 0 && carousel.length === 0;
  return empty ? null : content;
}

function sameAgent(a: AgentSnapshot | null, b: AgentSnapshot): boolean {
  return a !== null && a.id === b.id && a.name === b.name && (a.avatar ?? null) === (b.avatar ?? null);
}

/** Afterwards GET /messages answers root `agent: null`; stored messages keep their own agent. */
export async function unsetAgent(em: EntityManager, userId: number): Promise<User> {
  return transaction(em, async (tx) => {
    // Erased (GDPR) while this waited for the lock: as unknown as any other id.
    const user = await tx.em.findOne(UserSchema, { id: userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!user) throw notFound('user_not_found');
    user.currentAgent = null;
    notify(tx, { kind: 'agent', userId, agent: null });
    return user;
  });
}

/** An agent typing (or not) to the user; it stops by itself after `timeoutMs` without news. */
export async function setAgentTyping(
  em: EntityManager,
  input: { userId: number; agent: AgentSnapshot; isTyping: boolean; timeoutMs: number },
): Promise<User> {
  return transaction(em, async (tx) => {
    // Erased (GDPR) while this waited for the lock: as unknown as any other id.
    const user = await tx.em.findOne(UserSchema, { id: input.userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!user) throw notFound('user_not_found');
    user.agentTyping = input.isTyping ? input.agent : null;
    user.agentTypingUntil = input.isTyping ? new Date(Date.now() + input.timeoutMs) : null;
    notify(tx, {
      kind: 'agentTyping',
      userId: input.userId,
      agent: input.agent,
      isTyping: input.isTyping,
      typingUntil: typingUntilSeconds(user.agentTypingUntil),
    });
    await enqueuePushes(tx, [
      { kind: 'push_event', userId: input.userId, payload: pushEventPayload(input.isTyping ? 'startTyping' : 'stopTyping') },
    ]);
    return user;
  });
}
