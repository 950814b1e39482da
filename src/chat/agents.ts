// The agent side of a conversation: messages from an agent (which make that agent the
// conversation's current agent; group-committed), unsetting the current agent (Service API
// 2.3.0) and agent typing.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UserSchema, type AgentSnapshot, type User } from '../db/entities/index.ts';
import { AppError, notFound } from '../http/errors.ts';
import { GroupCommit, type GroupCommitOptions, type Written } from './group-commit.ts';
import { insertLocked, lockUsers, type LockedUser, type MessageRow, type NewMessage } from './messages.ts';
import { mediaOfConversation } from './media.ts';
import { refuseMerged } from './users.ts';

export interface AgentMessageInput {
  /** The calling Service's account: a user of another account is not found. */
  accountId: number;
  userId: number;
  agent: AgentSnapshot;
  /** 2 agent message, 5 agent system message. */
  typeId: 2 | 5;
  text: string | null;
  /** An upload of this conversation. */
  media: { id: string; description?: string | null | undefined } | null;
}

export type AgentMessage = NewMessage & {
  /** Whether this message made its agent the current one (the one before was another, or none). */
  agentChanged: boolean;
};

/** One writer per node: concurrent agent messages share transactions (group-commit.ts). */
export type AgentMessageWriter = GroupCommit<AgentMessageInput, AgentMessage>;

export function agentMessageWriter(options: Omit<GroupCommitOptions<AgentMessageInput, AgentMessage>, 'name' | 'write'>): AgentMessageWriter {
  return new GroupCommit({ ...options, name: 'agent', write: writeAgentMessages });
}

async function writeAgentMessages(tx: EntityManager, batch: readonly AgentMessageInput[]): Promise<Array<Written<AgentMessage>>> {
  // The users are checked under their locks, so no merge can slip in between check and insert.
  const users = await lockUsers(tx, batch.map((input) => input.userId));
  const outcomes: Array<Written<AgentMessage>> = [];
  const accepted: Array<{ at: number; input: AgentMessageInput; user: LockedUser; row: MessageRow }> = [];
  for (const [at, input] of batch.entries()) {
    try {
      const user = users.get(input.userId);
      if (!user || user.accountId !== input.accountId) throw notFound('user_not_found');
      // A merged anonymous id: the Service must talk to the new user id.
      refuseMerged(user);
      const media = input.media ? await mediaOfConversation(tx, input.userId, input.media) : null;
      accepted.push({
        at,
        input,
        user,
        row: {
          userId: input.userId,
          deviceId: null,
          typeId: input.typeId,
          message: media ? null : input.text,
          media,
          // A snapshot: the message keeps the agent it was sent by, whatever happens to the current one.
          agent: input.agent,
          requestUrl: null,
        },
      });
    } catch (err) {
      // A refusal is the caller's alone; anything else aborts the transaction.
      if (!(err instanceof AppError)) throw err;
      outcomes[at] = { ok: false, error: err };
    }
  }
  if (accepted.length === 0) return outcomes;
  const written = await insertLocked(
    tx,
    accepted.map((a) => a.row),
    accepted.map((a) => a.user),
  );
  // Under the same locks: each conversation's last agent becomes its current one, and a sent
  // message ends its typing.
  const last = new Map(accepted.map(({ input }) => [input.userId, input.agent]));
  const before = await tx.getConnection().execute<Array<{ id: number; before: AgentSnapshot | null }>>(
    `update users u set current_agent = v.agent, agent_typing = null, agent_typing_until = null, updated_at = now()
     from (select o.id, o.current_agent as before, v.agent
           from jsonb_to_recordset(?::jsonb) as v(user_id int, agent jsonb) join users o on o.id = v.user_id) v
     where u.id = v.id
     returning u.id, v.before`,
    [JSON.stringify([...last].map(([userId, agent]) => ({ user_id: userId, agent })))],
    'all',
    tx.getTransactionContext(),
  );
  // Whether each message changed the current agent decides its `agent` push.
  const current = new Map(before.map((r) => [r.id, r.before]));
  accepted.forEach(({ at, input }, i) => {
    const message = written[i];
    if (!message) throw new Error('agent message not written');
    const agentChanged = !sameAgent(current.get(input.userId) ?? null, input.agent);
    current.set(input.userId, input.agent);
    outcomes[at] = { ok: true, value: { message: message.message, prevId: message.prevId, agentChanged } };
  });
  return outcomes;
}

function sameAgent(a: AgentSnapshot | null, b: AgentSnapshot): boolean {
  return a !== null && a.id === b.id && a.name === b.name && (a.avatar ?? null) === (b.avatar ?? null);
}

/** Afterwards GET /messages answers root `agent: null`; stored messages keep their own agent. */
export async function unsetAgent(em: EntityManager, userId: number): Promise<User> {
  return em.transactional(async (tx) => {
    const user = await tx.findOneOrFail(UserSchema, { id: userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    user.currentAgent = null;
    return user;
  });
}

/** An agent typing (or not) to the user; it stops by itself after `timeoutMs` without news. */
export async function setAgentTyping(
  em: EntityManager,
  input: { userId: number; agent: AgentSnapshot; isTyping: boolean; timeoutMs: number },
): Promise<User> {
  return em.transactional(async (tx) => {
    const user = await tx.findOneOrFail(UserSchema, { id: input.userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    user.agentTyping = input.isTyping ? input.agent : null;
    user.agentTypingUntil = input.isTyping ? new Date(Date.now() + input.timeoutMs) : null;
    return user;
  });
}

/** The agent typing to the user right now, if any. */
export function typingAgent(user: Pick<User, 'agentTyping' | 'agentTypingUntil'>, now = new Date()): AgentSnapshot | null {
  return user.agentTyping && user.agentTypingUntil && user.agentTypingUntil > now ? user.agentTyping : null;
}
