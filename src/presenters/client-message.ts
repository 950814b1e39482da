// A message as chat clients read it, in the shape of the reference bodies
// (test/support/parley-shapes.ts holds the keys and types they read): the same object in GET
// /messages and socket events.
import type { AgentSnapshot, Message, User } from '../db/entities/index.ts';
import { typingAgent } from '../chat/agents.ts';
import { mediaReference } from './webhook-payloads.ts';

/** `isTyping` is set only where it is known: on the root agent of a conversation (see presentCurrentAgent). */
export function presentAgent(agent: AgentSnapshot | null | undefined, isTyping: boolean | null = null) {
  if (!agent) return null;
  return { id: agent.id, name: agent.name, avatar: agent.avatar ?? null, isTyping };
}

/** The root `agent` of a conversation: the current agent, and whether that agent is typing now. */
export function presentCurrentAgent(user: Pick<User, 'currentAgent' | 'agentTyping' | 'agentTypingUntil'>) {
  const typing = typingAgent(user);
  return presentAgent(user.currentAgent, user.currentAgent ? typing?.id === user.currentAgent.id : null);
}

export function presentClientMessage(message: Message, accountId: number) {
  const media = message.media ?? null;
  const reference = media ? `img/${mediaReference(accountId, media.path)}` : null;
  const [year = '', month = '', day = '', filename = ''] = media ? media.path.split('/') : [];
  return {
    id: message.id,
    time: Math.floor(message.createdAt.getTime() / 1000),
    message: media ? null : (message.message ?? null),
    image: reference,
    typeId: message.typeId,
    agent: presentAgent(message.agent),
    carousel: [],
    quickReplies: [],
    custom: [],
    title: null,
    media: media
      ? { id: reference, mimeType: media.mimeType, year, month, day, filename, description: media.description }
      : null,
    buttons: [],
    status: message.status,
  };
}
