// The real-time gateway: Socket.IO on the HTTP server (path /socket.io, namespace /). A socket
// authenticates like a Client API call, belongs to its user, and runs the same commands as the
// REST routes. Changes reach sockets as notifications published to every node (the Redis
// adapter's server-side emit when REDIS_URL is set); messages go through each socket's feed,
// so PostgreSQL stays the source of truth and nothing is lost or repeated.
import type { Server as HttpServer } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createAdapter } from '@socket.io/redis-adapter';
import type { Redis } from 'ioredis';
import { Server, type Socket } from 'socket.io';
import { identifyCaller, openConversation, type CallerHeaders } from '../client/caller.ts';
import { MessageSchema, type AgentSnapshot, type Message } from '../db/entities/index.ts';
import { AppError } from '../http/errors.ts';
import { knownError } from '../http/middleware/error-handler.ts';
import { writeLimitKey } from '../http/middleware/rate-limit.ts';
import type { Logger } from '../logger.ts';
import { presentAgent, presentClientMessage } from '../presenters/client-message.ts';
import { SocketFeed } from './feed.ts';
import { registerClientEvents, type ClientEventDeps } from './client-events.ts';
import type { ClientToServerEvents, ServerToClientEvents } from './events.ts';

/** What one node tells all nodes (itself included) about a conversation. */
export type Notice =
  | { kind: 'message'; userId: number; messageId: number; prevId: number | null }
  | { kind: 'agent'; userId: number; agent: AgentSnapshot | null }
  | { kind: 'agentTyping'; userId: number; agent: AgentSnapshot; isTyping: boolean }
  | { kind: 'messageStatus'; userId: number; messages: Array<{ id: number; status: number }> }
  | { kind: 'merged'; fromUserId: number; toUserId: number };

interface SocketData {
  /**
   * The handshake's headers, not the caller's loaded records: an ORM entity would keep its
   * EntityManager (identity map and all) alive for as long as the socket is connected.
   */
  headers: CallerHeaders;
  /** The write-limit key, the same as the device's REST calls use. */
  limitKey: string;
  accountId: number;
  userId: number;
  feed: SocketFeed;
}

export type ClientSocket = Socket<ClientToServerEvents, ServerToClientEvents, Record<string, never>, SocketData>;

const NOTICE = 'palaver:notice';

export interface GatewayDeps extends ClientEventDeps {
  em: () => EntityManager;
  logger: Logger;
  redis: Redis | undefined;
}

export class Gateway {
  private io: Server | undefined;
  private readonly byUser = new Map<number, Set<ClientSocket>>();
  private readonly adapterClients: Redis[] = [];

  constructor(private readonly deps: GatewayDeps) {}

  attach(http: HttpServer): void {
    const io = new Server(http, {
      path: '/socket.io',
      // Widgets run on customers' sites: any origin, no cookies.
      cors: { origin: true, credentials: false },
      serveClient: false,
    });
    if (this.deps.redis) {
      const pub = this.deps.redis.duplicate();
      const sub = this.deps.redis.duplicate();
      for (const client of [pub, sub]) {
        client.on('error', (err: Error) => this.deps.logger.warn({ err: err.message }, 'socket.io redis adapter'));
      }
      // Notices are lost only while Redis is away: once the subscriber is back, every local
      // socket reads on from PostgreSQL whatever it missed.
      sub.on('ready', () => this.resync());
      this.adapterClients.push(pub, sub);
      io.adapter(createAdapter(pub, sub));
    }
    io.use((socket, next) => {
      this.authenticate(socket as ClientSocket).then(
        () => next(),
        (err: unknown) => next(this.refusal(err)),
      );
    });
    io.on('connection', (socket) => this.connected(socket as ClientSocket));
    io.on(NOTICE, (notice: Notice) => this.receive(notice));
    this.io = io;
  }

  /** Tells every node; call after the change committed. */
  publish(notice: Notice): void {
    this.receive(notice);
    // One node (no Redis): nobody else to tell; the in-memory adapter would only warn.
    if (!this.deps.redis) return;
    try {
      this.io?.serverSideEmit(NOTICE, notice);
    } catch (err) {
      // Other nodes' sockets catch up from the database at their next message or reconnect.
      this.deps.logger.warn({ err }, 'notice not shared with other nodes');
    }
  }

  messageCreated(userId: number, message: Message, prevId: number | null): void {
    this.publish({ kind: 'message', userId, messageId: message.id, prevId });
  }

  async close(): Promise<void> {
    // Not io.close(): that would close the HTTP server, which the server stops on its own terms.
    this.io?.disconnectSockets(true);
    this.io?.engine.close();
    await Promise.all(this.adapterClients.map((client) => client.quit().catch(() => client.disconnect())));
  }

  private async authenticate(socket: ClientSocket): Promise<void> {
    const auth = socket.handshake.auth as Record<string, unknown>;
    const header = (name: string) => {
      const value = socket.handshake.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
    const em = this.deps.em();
    const headers: CallerHeaders = {
      identification: text(auth.identification) ?? header('x-iris-identification'),
      authorization: text(auth.authorization) ?? header('authorization'),
    };
    const caller = await identifyCaller(em, headers);
    const { account, device, user } = await openConversation(em, caller);
    const accountId = account.id;
    const deviceId = device.id;
    const lastMessageId = Number(auth.lastMessageId ?? header('x-last-message-id') ?? NaN);
    const startAt = Number.isSafeInteger(lastMessageId) && lastMessageId >= 0 ? lastMessageId : await this.newest(em, user.id);
    const data = socket.data;
    data.headers = headers;
    data.limitKey = writeLimitKey(accountId, caller.deviceId);
    data.accountId = accountId;
    data.userId = user.id;
    data.feed = new SocketFeed(
      {
        deviceId,
        userId: user.id,
        send: (message) => socket.emit('message', presentClientMessage(message, accountId)),
      },
      this.deps.em,
      startAt,
      (err) => this.deps.logger.warn({ err }, 'socket feed read failed'),
    );
  }

  /** The same code a REST call would get, in connect_error's message and data. */
  private refusal(err: unknown): Error {
    const known = knownError(err);
    if (!known) this.deps.logger.error({ err }, 'socket handshake failed');
    const answer = known ?? new AppError(500, 'internal_error');
    return Object.assign(new Error(answer.code), { data: { status: answer.status, code: answer.code } });
  }

  private connected(socket: ClientSocket): void {
    this.join(socket, socket.data.userId);
    // Catch-up before live messages: the feed reads what came after lastMessageId first.
    void socket.data.feed.pull();
    socket.on('disconnect', () => this.leave(socket, socket.data.userId));
    registerClientEvents(socket, this.deps, this);
  }

  private resync(): void {
    for (const sockets of this.byUser.values()) {
      for (const socket of sockets) void socket.data.feed.pull();
    }
  }

  private join(socket: ClientSocket, userId: number): void {
    // The Socket.IO room of the user too, so adapter tools (fetchSockets, in(room)) see it.
    void socket.join(`user:${userId}`);
    const set = this.byUser.get(userId) ?? new Set();
    set.add(socket);
    this.byUser.set(userId, set);
  }

  private leave(socket: ClientSocket, userId: number): void {
    const set = this.byUser.get(userId);
    set?.delete(socket);
    if (set?.size === 0) this.byUser.delete(userId);
  }

  private async newest(em: EntityManager, userId: number): Promise<number> {
    const newest = await em.findOne(MessageSchema, { userId, typeId: { $ne: 4 } }, { orderBy: { id: 'desc' }, fields: ['id'] });
    return newest?.id ?? 0;
  }

  private receive(notice: Notice): void {
    if (notice.kind === 'merged') {
      void this.moveSockets(notice.fromUserId, notice.toUserId);
      return;
    }
    const sockets = this.byUser.get(notice.userId);
    if (!sockets) return;
    if (notice.kind === 'message') {
      void this.offer([...sockets], notice.messageId, notice.prevId);
      return;
    }
    for (const socket of sockets) {
      if (notice.kind === 'agent') socket.emit('agent', { agent: presentAgent(notice.agent) });
      if (notice.kind === 'agentTyping') {
        socket.emit('agentTyping', { agent: presentAgent(notice.agent, notice.isTyping), isTyping: notice.isTyping });
      }
      if (notice.kind === 'messageStatus') socket.emit('messageStatus', { messages: notice.messages });
    }
  }

  /**
   * A notice carries ids only. Sockets right behind it get the message read once for all of
   * them; sockets that are elsewhere (a gap, a lost notice) read on from where they are.
   */
  private async offer(sockets: ClientSocket[], messageId: number, prevId: number | null): Promise<void> {
    const waiting = sockets.filter((s) => messageId > s.data.feed.lastSent);
    const direct = waiting.filter((s) => s.data.feed.lastSent === prevId);
    for (const socket of waiting) if (!direct.includes(socket)) void socket.data.feed.pull();
    if (direct.length === 0) return;
    try {
      const message = await this.deps.em().findOne(MessageSchema, { id: messageId });
      if (message) for (const socket of direct) socket.data.feed.offer(message, prevId);
    } catch (err) {
      this.deps.logger.warn({ err }, 'socket message read failed');
    }
  }

  /** After a merge the anonymous user's sockets belong to the registered user, on every node. */
  private async moveSockets(fromUserId: number, toUserId: number): Promise<void> {
    const sockets = this.byUser.get(fromUserId);
    if (!sockets) return;
    this.byUser.delete(fromUserId);
    const newest = await this.newest(this.deps.em(), toUserId);
    for (const socket of sockets) {
      void socket.leave(`user:${fromUserId}`);
      socket.data.userId = toUserId;
      socket.data.feed.restart(toUserId, newest);
      this.join(socket, toUserId);
      // The conversation the client shows changed: it reloads the history over REST.
      socket.emit('merged', { userId: toUserId });
    }
  }
}
