// The agent side of a conversation: messages from an agent (which make that agent the
// conversation's current agent) and unsetting the current agent (Service API 2.3.0).
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UserSchema, type AgentSnapshot, type User } from '../db/entities/index.ts';
import { insertMessages, type NewMessage } from './messages.ts';
import { mediaOfConversation } from './media.ts';
import { refuseMerged } from './users.ts';

export interface AgentMessageInput {
  userId: number;
  agent: AgentSnapshot;
  /** 2 agent message, 5 agent system message. */
  typeId: 2 | 5;
  text: string | null;
  /** An upload of this conversation. */
  media: { id: string; description?: string | null | undefined } | null;
}

export async function sendAgentMessage(em: EntityManager, input: AgentMessageInput): Promise<NewMessage & { agentChanged: boolean }> {
  return em.transactional(async (tx) => {
    const media = input.media ? await mediaOfConversation(tx, input.userId, input.media) : null;
    const [written] = await insertMessages(tx, [
      {
        userId: input.userId,
        deviceId: null,
        typeId: input.typeId,
        message: media ? null : input.text,
        media,
        // A snapshot: the message keeps the agent it was sent by, whatever happens to the current one.
        agent: input.agent,
        requestUrl: null,
      },
    ]);
    if (!written) throw new Error('no message written');
    // Merged since the caller looked it up (the message followed the merge): the Service must
    // talk to the new user id, and the transaction rolls back.
    if (written.user.id !== input.userId) refuseMerged({ mergedIntoUserId: written.user.id });
    // Under the lock insertMessages took: this agent becomes the current one, and a sent
    // message ends its typing. Whether the current agent changed decides the `agent` push.
    const [updated] = await tx.getConnection().execute<Array<{ changed: boolean }>>(
      `update users u set current_agent = ?::jsonb, agent_typing = null, agent_typing_until = null, updated_at = now()
       from (select id, current_agent as before from users where id = ?) o
       where u.id = o.id
       returning o.before is distinct from u.current_agent as changed`,
      [JSON.stringify(input.agent), input.userId],
      'all',
      tx.getTransactionContext(),
    );
    return { message: written.message, prevId: written.prevId, agentChanged: updated?.changed ?? true };
  });
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
