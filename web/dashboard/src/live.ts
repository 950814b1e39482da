// The operators' live channel (Socket.IO namespace /operators, src/realtime/operators.ts): the
// server says which conversation changed, or whose delivery outcomes were committed; pages that
// show them read them again over the Admin API.
import { io, type Socket } from 'socket.io-client';
import type { ConversationChange, DeliveriesChange, Ended, OperatorEvents } from '../../../src/contracts/operator-events.ts';
import { sessionEnded } from './api.ts';

export type { ConversationChange, DeliveriesChange };

let socket: Socket<OperatorEvents> | undefined;
const conversationListeners = new Set<(change: ConversationChange) => void>();
const deliveriesListeners = new Set<(change: DeliveriesChange) => void>();

export function connectLive(token: string): void {
  disconnectLive();
  socket = io('/operators', { path: '/socket.io', auth: { token }, transports: ['websocket'] });
  socket.on('conversation', (change) => {
    for (const listener of conversationListeners) listener(change);
  });
  socket.on('deliveries', (change) => {
    for (const listener of deliveriesListeners) listener(change);
  });
  // The server ends the socket with the session (signed out elsewhere, disabled, expired): the
  // page goes back to sign-in at once. Ended for permission_denied (conversations:read taken
  // away), the page stays; what it reads next answers 403.
  socket.on('ended', ({ code }) => {
    if (code === 'invalid_token') sessionEnded();
  });
  // The page was signed in when it opened the socket, but the session may end before the
  // handshake reaches the server (disabled or signed out meanwhile): the server then refuses it
  // with the same code, and Socket.IO does not try again after a refusal, so nothing else would
  // ever tell the page.
  socket.on('connect_error', (err: Error & { data?: Partial<Ended> }) => {
    if (err.data?.code === 'invalid_token') sessionEnded();
  });
}

export function disconnectLive(): void {
  socket?.disconnect();
  socket = undefined;
}

/** Listens until the returned function is called (when the page is left). */
export function onConversation(listener: (change: ConversationChange) => void): () => void {
  conversationListeners.add(listener);
  return () => conversationListeners.delete(listener);
}

/** As onConversation(), for committed delivery outcomes (at most one event a second per account). */
export function onDeliveries(listener: (change: DeliveriesChange) => void): () => void {
  deliveriesListeners.add(listener);
  return () => deliveriesListeners.delete(listener);
}
