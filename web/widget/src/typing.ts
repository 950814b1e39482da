// Typing both ways: the visitor's startTyping/stopTyping over the socket, and the agent's typing
// shown until it stops (the server ends it; a timer guards against a stop that never comes).
import type { Conversation } from './conversation.ts';
import type { Transport } from './transport.ts';
import type { ChatMessage } from './types.ts';

/** The visitor stops typing (stopTyping) after this long without a key. */
const TYPING_IDLE_MS = 3000;
/** startTyping is sent again this often while typing goes on, within the server's typing timeout. */
const TYPING_REPEAT_MS = 5000;
/** The agent's typing shows no longer than this without news from the server. */
const AGENT_TYPING_MOST_MS = 30_000;

export class Typing {
  private sentAt = 0;
  private idle: ReturnType<typeof setTimeout> | undefined;
  private agentEnd: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly transport: Transport,
    private readonly conversation: Conversation,
    private readonly render: () => void,
  ) {}

  /** The visitor pressed a key in the composer. */
  typed(): void {
    if (!this.transport.connected) return;
    const now = Date.now();
    if (now - this.sentAt > TYPING_REPEAT_MS) {
      this.sentAt = now;
      void this.transport.hint('startTyping');
    }
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.stop(), TYPING_IDLE_MS);
  }

  /** The visitor stopped (sent, closed the chat, or went idle). */
  stop(): void {
    clearTimeout(this.idle);
    if (this.sentAt === 0) return;
    this.sentAt = 0;
    void this.transport.hint('stopTyping');
  }

  /** The agent typing now, or null. */
  agent(agent: ChatMessage['agent']): void {
    clearTimeout(this.agentEnd);
    this.conversation.typing = agent;
    if (agent) this.agentEnd = setTimeout(() => this.agent(null), AGENT_TYPING_MOST_MS);
    this.render();
  }

  clear(): void {
    clearTimeout(this.idle);
    clearTimeout(this.agentEnd);
  }
}
