// How the widget talks to Palaver once registered: the one socket (connection.ts) while it is up,
// REST (api.ts) otherwise. A visitor's message goes over whichever works now; both answer the
// stored message's id, so the outgoing queue does not care which.
import type { ClientApi, OutgoingBody } from './api.ts';
import { connect, emitWithAck, type HandshakeAuth, type ServerEvents, type WidgetSocket } from './connection.ts';
import { ApiError } from './types.ts';

/** What the widget does when the socket connects, drops, is refused, or hears an event. */
export interface SocketListeners extends ServerEvents {
  connect(): void;
  disconnect(): void;
  /** The handshake was refused: the code, as REST would answer it. */
  refused(code: string): void;
}

export class Transport {
  private socket: WidgetSocket | null = null;

  constructor(
    private readonly server: string,
    private readonly api: ClientApi,
  ) {}

  get connected(): boolean {
    return this.socket?.connected ?? false;
  }

  /** Opens the socket unless one is open; `handshake` is read at every (re)connection. */
  open(handshake: () => HandshakeAuth, on: SocketListeners): void {
    if (this.socket) return;
    const socket = connect(this.server, handshake);
    this.socket = socket;
    socket.on('connect', () => on.connect());
    socket.on('disconnect', () => on.disconnect());
    socket.on('connect_error', (err: Error) => on.refused(err.message));
    socket.on('message', (message) => on.message(message));
    socket.on('agent', (payload) => on.agent(payload));
    socket.on('agentTyping', (payload) => on.agentTyping(payload));
    socket.on('messageStatus', (payload) => on.messageStatus(payload));
    socket.on('merged', (payload) => on.merged(payload));
    socket.on('unauthorized', (payload) => on.unauthorized(payload));
  }

  close(): void {
    this.socket?.disconnect();
    this.socket = null;
  }

  /** Over the socket when it is up, else over REST: both answer the stored message's id. */
  async send(body: OutgoingBody): Promise<number> {
    if (this.socket?.connected) {
      const answer = await emitWithAck(this.socket, 'message', body);
      const data = answer.data as { messageId?: string } | null;
      if (answer.status === 'ERROR' || !data?.messageId) {
        const code = answer.notifications[0]?.message ?? 'error';
        throw new ApiError(0, code);
      }
      return Number(data.messageId);
    }
    return this.api.send(body);
  }

  /** Typing and opening the chat: hints, sent only over a connected socket; one lost is not worth a retry. */
  async hint(name: 'startTyping' | 'stopTyping' | 'chatOpened'): Promise<void> {
    if (!this.socket?.connected) return;
    try {
      await emitWithAck(this.socket, name, {});
    } catch {
      // Lost: the next hint says the same.
    }
  }
}
