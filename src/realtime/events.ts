// The Socket.IO event maps, both ways: what the gateway sends and what a client may send.
import type { Envelope } from '../http/envelope.ts';
import type { presentAgent, presentClientMessage } from '../presenters/client-message.ts';

type AgentView = ReturnType<typeof presentAgent>;

export interface ServerToClientEvents {
  /** A message of the conversation, the same object as in GET /messages. */
  message(message: ReturnType<typeof presentClientMessage>): void;
  /** The current agent changed, or was unset (null). */
  agent(payload: { agent: AgentView }): void;
  agentTyping(payload: { agent: AgentView; isTyping: boolean }): void;
  messageStatus(payload: { messages: Array<{ id: number; status: number }> }): void;
  /** This socket's anonymous conversation was merged into a registered one: reload history. */
  merged(payload: { userId: number }): void;
}

export type Ack = (answer: Envelope) => void;

export interface ClientToServerEvents {
  message(body: unknown, ack?: Ack): void;
  startTyping(body: unknown, ack?: Ack): void;
  stopTyping(body: unknown, ack?: Ack): void;
  chatOpened(body: unknown, ack?: Ack): void;
}
