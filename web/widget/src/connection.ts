// The widget's one Socket.IO connection: WebSocket first, HTTP long-polling when a network
// refuses WebSockets. Every (re)connection hands over the last message id the widget has, so the
// server sends exactly what was missed, in order, before anything new.
import { io, type Socket } from 'socket.io-client';
import type { AgentView, ChatMessage, Envelope } from './types.ts';

export interface ServerEvents {
  message(message: ChatMessage): void;
  agent(payload: { agent: AgentView | null }): void;
  agentTyping(payload: { agent: AgentView | null; isTyping: boolean }): void;
  messageStatus(payload: { messages: Array<{ id: number; status: number }> }): void;
  merged(payload: { userId: number }): void;
  unauthorized(payload: { code: string }): void;
}

export interface ClientEvents {
  message(body: unknown, ack: (answer: Envelope) => void): void;
  startTyping(body: unknown, ack: (answer: Envelope) => void): void;
  stopTyping(body: unknown, ack: (answer: Envelope) => void): void;
  chatOpened(body: unknown, ack: (answer: Envelope) => void): void;
}

export type WidgetSocket = Socket<ServerEvents, ClientEvents>;

export interface HandshakeAuth {
  identification: string;
  authorization?: string;
  lastMessageId?: number;
}

/** How long an event waits for its acknowledgement before the widget tries again. */
export const ACK_TIMEOUT_MS = 10_000;

export function connect(server: string, auth: () => HandshakeAuth): WidgetSocket {
  return io(server, {
    path: '/socket.io',
    transports: ['websocket', 'polling'],
    // A network that drops WebSockets gets long-polling instead of retrying WebSockets forever.
    tryAllTransports: true,
    withCredentials: false,
    reconnectionDelay: 500,
    reconnectionDelayMax: 5000,
    // Read at every attempt: the cursor and the credentials of that moment.
    auth: (cb) => cb({ ...auth() }),
  });
}

/** An event and its acknowledgement, rejected after ACK_TIMEOUT_MS or when the socket is not connected. */
export async function emitWithAck(socket: WidgetSocket, event: keyof ClientEvents, body: unknown): Promise<Envelope> {
  if (!socket.connected) throw new Error('not connected');
  return (await socket.timeout(ACK_TIMEOUT_MS).emitWithAck(event, body)) as Envelope;
}
