// Whether and until when an agent types: read by the presenters of conversations (which must
// not import the writers in agents.ts, since those present push payloads).
import type { AgentSnapshot, User } from '../db/entities/index.ts';

/**
 * An agent object's `isTyping` while it types: the Unix time in seconds until which the typing
 * indicator lasts (rounded up, so it never ends before the server's), else null.
 */
export function typingUntilSeconds(until: Date | null | undefined): number | null {
  return until ? Math.ceil(until.getTime() / 1000) : null;
}

/** The agent typing to the user right now, if any. */
export function typingAgent(user: Pick<User, 'agentTyping' | 'agentTypingUntil'>, now = new Date()): AgentSnapshot | null {
  return user.agentTyping && user.agentTypingUntil && user.agentTypingUntil > now ? user.agentTyping : null;
}
