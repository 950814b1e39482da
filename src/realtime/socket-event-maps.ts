// The Socket.IO event maps, both ways: what the gateway sends and what a client may send.
import type { Socket } from 'socket.io';
import type { CallerHeaders } from '../api/client/caller.ts';
import type { ConversationKeys } from '../conversations/caller-snapshot.ts';
import type { Envelope } from '../presenters/envelope.ts';
import type { SocketFeed } from './feed.ts';
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
  /**
   * The socket is disconnected next: the registered user's authorization header expired (its
   * validUntil passed); the user was erased with their devices (`device_not_found`, what
   * REST answers the device from then on: register it again); or the socket's anonymous
   * conversation was merged into a registered user's whose header it did not present
   * (`authorization_required`, or `authorization_mismatch` for another customer's header, what
   * REST answers such a call: connect again with that user's header).
   */
  unauthorized(payload: { code: 'authorization_expired' | 'device_not_found' | 'authorization_required' | 'authorization_mismatch' }): void;
}

export type Ack = (answer: Envelope) => void;

export interface ClientToServerEvents {
  message(body: unknown, ack?: Ack): void;
  startTyping(body: unknown, ack?: Ack): void;
  stopTyping(body: unknown, ack?: Ack): void;
  chatOpened(body: unknown, ack?: Ack): void;
}

export interface SocketData {
  /** The handshake's headers: the caller is identified from them again whenever `caller` is dropped. */
  headers: CallerHeaders;
  /**
   * The caller as its first event identified it, until a notice drops it (socket-events.ts):
   * the few fields its events use (ConversationKeys), copied out of the snapshots, never ORM
   * entities, which would keep their EntityManager alive. Idle sockets that never send hold none.
   */
  caller: { conversation: ConversationKeys; until: number } | undefined;
  /** Counts the drops of `caller`, so a read that a drop overtook is not kept. */
  callerEpoch: number;
  /** The handshake's Referer: a message's requestUrl when its body names no page, as over REST. */
  referer: string | undefined;
  /** The write-limit key, the same as the device's REST calls use. */
  limitKey: string;
  /** The client address (addresses.ts): writes are limited per address too, as over REST. */
  address: string;
  accountId: number;
  deviceId: number;
  userId: number;
  feed: SocketFeed<ClientSocket>;
  /** The handshake's authorization header's validUntil (seconds); undefined without a header. */
  validUntil: number | undefined;
  /** The customer the handshake's authorization header names; undefined without a header. */
  identification: string | undefined;
  /** The one timer that disconnects the socket when validUntil passes. */
  expiry: ReturnType<typeof setTimeout> | undefined;
}

export type ClientSocket = Socket<ClientToServerEvents, ServerToClientEvents, Record<string, never>, SocketData>;
