// The operators' live channel (Socket.IO namespace /operators, src/realtime/operators.ts): the
// server says which conversation changed; pages that show it read it again over the Admin API.
import { io, type Socket } from 'socket.io-client';

export interface ConversationChange {
  accountId: number;
  userId: number;
  change: 'message' | 'agent' | 'messageStatus' | 'merged';
}

type Listener = (change: ConversationChange) => void;

let socket: Socket | undefined;
const listeners = new Set<Listener>();

export function connectLive(token: string): void {
  disconnectLive();
  socket = io('/operators', { path: '/socket.io', auth: { token }, transports: ['websocket'] });
  socket.on('conversation', (change: ConversationChange) => {
    for (const listener of listeners) listener(change);
  });
}

export function disconnectLive(): void {
  socket?.disconnect();
  socket = undefined;
}

/** Listens until the returned function is called (when the page is left). */
export function onConversation(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
