// The real-time gateway: Socket.IO on the HTTP server (path /socket.io, namespace /). A socket
// authenticates like a Client API call, belongs to its user, and runs the same commands as the
// REST routes. Changes reach sockets as notifications published to every node (the Redis
// adapter's server-side emit when REDIS_URL is set); messages go through each socket's feed,
// so PostgreSQL stays the source of truth and nothing is lost or repeated.
import type { Server as HttpServer } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createAdapter } from '@socket.io/redis-adapter';
import type { Redis } from 'ioredis';
import { Server } from 'socket.io';
import type { TrustedProxies } from '../addresses.ts';
import { openConversation, type CallerHeaders } from '../api/client/caller.ts';
import type { ServiceCallers } from '../api/service/caller.ts';
import type { AnyNotice } from '../conversations/notices.ts';
import { MessageSchema, MessageType, UserSchema, type Message } from '../db/entities/index.ts';
import { AppError, knownError } from '../errors.ts';
import { writeLimitKey } from '../limits.ts';
import type { Logger } from '../logger.ts';
import { presentAgent, presentClientMessage } from '../presenters/client-message.ts';
import { SocketFeed, type FeedOutlet } from './feed.ts';
import { OperatorChannel, type OperatorNamespace } from './operators.ts';
import { clientEventHandlers, dropCaller, type ClientEventDeps } from '../api/client/socket-events.ts';
import type { ClientSocket } from './socket-event-maps.ts';

/** Server-side event asking the other nodes whether a user has a socket there. */
const PRESENCE = 'palaver:presence';
const PRESENCE_TIMEOUT_MS = 2000;
const NOTICE = 'palaver:notice';

/** The Engine.IO connection under a socket: what the handshake's address was read from. */
type EngineConnection = ClientSocket['conn'];

/** What a connected socket's handshake keeps of its headers and auth: nothing, shared by all. */
const RELEASED: Record<string, never> = Object.freeze({});

/** The longest delay setTimeout keeps (about 24.8 days); a later validUntil re-arms on the way. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Arms the socket's one expiry timer: REST refuses a header once validUntil (seconds) is past
 * (authorization.ts), and so the socket is told `unauthorized` and disconnected then.
 * Module-level, so a socket holds no closure of its own, only its timer.
 */
function armExpiry(socket: ClientSocket): void {
  const { validUntil } = socket.data;
  if (validUntil === undefined) return;
  const delay = validUntil * 1000 + 1 - Date.now();
  if (delay <= 0) {
    socket.data.expiry = undefined;
    socket.emit('unauthorized', { code: 'authorization_expired' });
    socket.disconnect(true);
    return;
  }
  socket.data.expiry = setTimeout(armExpiry, Math.min(delay, MAX_TIMER_MS), socket);
  socket.data.expiry.unref();
}

export interface GatewayDeps extends ClientEventDeps {
  em: () => EntityManager;
  logger: Logger;
  redis: Redis | undefined;
  /**
   * The database's namespace in Redis (limitsNamespace): the adapter's channels carry it, so that
   * nodes of another database sharing the Redis (another deployment, a test database) never get
   * this database's notices or answer its presence questions; ids mean something only within one
   * database.
   */
  redisNamespace: string;
  /** Whose X-Forwarded-For is believed, for the handshake's client address. */
  trustedProxies: TrustedProxies;
  /** Open sockets per client address on this node; more handshakes are refused (429 too_many_connections). */
  maxSocketsPerAddress: number;
  /** The Service API's keys: an `account` notice drops that account's. */
  serviceCallers: Pick<ServiceCallers, 'dropAccount'>;
}

export class Gateway {
  private io: Server | undefined;
  /** Each conversation's sockets on this node; no Socket.IO room per user besides (about 80 B a socket). */
  private readonly byUser = new Map<number, Set<ClientSocket>>();
  private readonly adapterClients: Redis[] = [];
  /** Open (or handshaking) sockets per client address, on this node. */
  private readonly perAddress = new Map<string, number>();
  /** The dashboard's namespace (/operators), told of the same notices. */
  private operators: OperatorChannel | undefined;

  /** Shared by every socket (each gets them with itself as `this`), so a socket holds no closures of its own. */
  private readonly handlers: ReturnType<typeof clientEventHandlers>;
  private readonly onDisconnect: (this: ClientSocket) => void;
  /**
   * Shared as onDisconnect is, with the connection as `this`: a closure per socket would cost
   * every idle socket a few hundred bytes, an entry of `reservedBy` a few dozen.
   */
  private readonly releaseOnClose: (this: EngineConnection) => void;
  /** The address each reserving connection counts against (the request it came from is dropped at close). */
  private readonly reservedBy = new WeakMap<EngineConnection, string>();
  private readonly feedOutlet: FeedOutlet<ClientSocket>;

  constructor(private readonly deps: GatewayDeps) {
    this.handlers = clientEventHandlers(deps);
    const leave = (socket: ClientSocket) => this.leave(socket, socket.data.userId);
    const unreserve = (conn: EngineConnection) => this.unreserve(conn);
    this.onDisconnect = function (this: ClientSocket) {
      clearTimeout(this.data.expiry);
      leave(this);
      // Left the namespace, maybe with its connection still open: the place is free again.
      unreserve(this.conn);
    };
    this.releaseOnClose = function (this: EngineConnection) {
      unreserve(this);
    };
    this.feedOutlet = {
      em: deps.em,
      send: (socket, message) => socket.emit('message', presentClientMessage(message, socket.data.accountId)),
      onError: (err) => deps.logger.warn({ err }, 'socket feed read failed'),
    };
  }

  attach(http: HttpServer): void {
    const io = new Server(http, {
      path: '/socket.io',
      // Widgets run on customers' sites: any origin, no cookies.
      cors: { origin: true, credentials: false },
      serveClient: false,
    });
    if (this.deps.redis) {
      // Both connect at once and, like the main client, reconnect forever; neither is awaited,
      // so a node starts while Redis is down. The subscriber's commands (the adapter's
      // subscriptions, sent unawaited as it is built) wait for Redis however long it takes,
      // instead of being refused: refused, they would be unhandled rejections, and the node
      // would never subscribe once Redis is back.
      const pub = this.deps.redis.duplicate({ lazyConnect: false });
      const sub = this.deps.redis.duplicate({ lazyConnect: false, maxRetriesPerRequest: null });
      for (const client of [pub, sub]) {
        client.on('error', (err: Error) => this.deps.logger.debug({ err: err.message }, 'socket.io redis adapter'));
      }
      // Notices are lost only while Redis is away: once the subscriber is back, every local
      // socket reads on from PostgreSQL whatever it missed.
      sub.on('ready', () => this.resync());
      // The adapter does not handle a refused publish: while Redis is away, a notice's publish
      // fails once its retries are spent, and unhandled, that rejection would end the process.
      // A notice lost that way is caught up by the resync above.
      const publish: (channel: string, message: string | Buffer) => Promise<number> = pub.publish.bind(pub);
      Object.assign(pub, {
        publish: (channel: string, message: string | Buffer) =>
          publish(channel, message).catch((err: unknown) => {
            this.deps.logger.warn({ err: (err as Error).message }, 'notice not published: redis unavailable');
            return 0;
          }),
      });
      this.adapterClients.push(pub, sub);
      io.adapter(tolerantAdapter(createAdapter(pub, sub, { key: `socket.io#${this.deps.redisNamespace}` }), this.deps.logger));
    }
    io.use((socket, next) => {
      const client = socket as ClientSocket;
      const { address: peer, headers } = socket.handshake;
      const address = this.deps.trustedProxies.clientAddress(peer, headers['x-forwarded-for']);
      // Counted from the handshake on, so a burst of handshakes cannot pass the cap together.
      // One place per Engine.IO connection: a second CONNECT for / sent on it while the first
      // is still being authenticated (Socket.IO ignores one sent later) is refused, so that a
      // connection never holds more places than its close gives back.
      if (this.reservedBy.has(socket.conn) || !this.reserve(address, socket.conn)) {
        return next(this.refusal(new AppError(429, 'too_many_connections')));
      }
      client.data.address = address;
      this.authenticate(client).then(
        () => next(),
        (err: unknown) => {
          this.unreserve(socket.conn);
          next(this.refusal(err));
        },
      );
    });
    io.on('connection', (socket) => this.connected(socket as ClientSocket));
    io.on(NOTICE, (notice: AnyNotice) => this.receive(notice));
    // Another node asks whether a customer has a socket here (an email waits while they do).
    io.on(PRESENCE, (userId: number, ack: (connected: boolean) => void) => ack(this.byUser.has(userId)));
    this.operators = new OperatorChannel(io.of('/operators') as OperatorNamespace, this.deps.em, (err) =>
      this.deps.logger.warn({ err }, 'operator notice failed'),
    );
    this.io = io;
  }

  /**
   * Tells every node of a committed change; only the outlets of committed transactions (db/tx/outlets.ts) call it. A message goes to
   * the conversation it was written to (a merge may have moved it since the request began):
   * this node's sockets get the row as written, other nodes its ids.
   */
  publish(notice: AnyNotice): void {
    this.receive(notice);
    if (notice.kind === 'message') {
      const { message: _written, ...ids } = notice;
      this.share(ids);
    } else {
      this.share(notice);
    }
  }

  /**
   * Whether a socket of the user is connected to this node or (with Redis) to any other, asked
   * of the other nodes with a bounded wait. A node that does not answer in time counts as
   * having none: an email too many is better than an answer never read.
   */
  async isConnected(userId: number): Promise<boolean> {
    if (this.byUser.has(userId)) return true;
    if (!this.deps.redis || !this.io) return false;
    try {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<unknown[]>((resolve) => {
        timer = setTimeout(() => resolve([]), PRESENCE_TIMEOUT_MS);
      });
      const answers = await Promise.race([this.io.serverSideEmitWithAck(PRESENCE, userId) as Promise<unknown[]>, late]);
      clearTimeout(timer);
      return answers.some((answer) => answer === true);
    } catch {
      return false;
    }
  }

  private share(notice: AnyNotice): void {
    // One node (no Redis): nobody else to tell; the in-memory adapter would only warn.
    if (!this.deps.redis) return;
    try {
      this.io?.serverSideEmit(NOTICE, notice);
    } catch (err) {
      // Other nodes' sockets catch up from the database at their next message or reconnect.
      this.deps.logger.warn({ err }, 'notice not shared with other nodes');
    }
  }

  async close(): Promise<void> {
    // Not io.close(): that would close the HTTP server, which the server stops on its own terms.
    // The connections are closed, not the sockets disconnected: a client told "io server
    // disconnect" does not reconnect (the widget and the Parley clients would stay offline
    // until reloaded); after a closed connection they reconnect, to another node or to this one
    // restarted, and catch up from their last message id.
    this.io?.engine.close();
    // A client that is not connected is cut: a QUIT would wait for a Redis that may never come.
    await Promise.all(
      this.adapterClients.map((client) =>
        client.status === 'ready' ? client.quit().catch(() => client.disconnect()) : Promise.resolve(client.disconnect()),
      ),
    );
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
      origin: header('origin'),
    };
    const caller = await this.deps.callers.identify(headers);
    const { account, device, user } = openConversation(caller);
    const accountId = account.id;
    const deviceId = device.id;
    const lastMessageId = Number(auth.lastMessageId ?? header('x-last-message-id') ?? NaN);
    const startAt = Number.isSafeInteger(lastMessageId) && lastMessageId >= 0 ? lastMessageId : await this.newest(em, user.id);
    const data = socket.data;
    data.headers = headers;
    data.referer = header('referer');
    data.limitKey = writeLimitKey(accountId, caller.deviceId);
    data.accountId = accountId;
    data.userId = user.id;
    data.deviceId = deviceId;
    data.caller = undefined;
    data.callerEpoch = 0;
    data.feed = new SocketFeed(socket, this.feedOutlet, startAt);
    data.validUntil = caller.identity?.validUntil;
    data.identification = caller.identity?.identification;
  }

  /**
   * A place for the connection's socket, counted against its address; given back exactly once
   * (unreserve): when the handshake is refused, the socket disconnects or the connection
   * closes, whichever comes first. False when the address is full.
   */
  private reserve(address: string, conn: EngineConnection): boolean {
    const open = this.perAddress.get(address) ?? 0;
    if (open >= this.deps.maxSocketsPerAddress) return false;
    this.perAddress.set(address, open + 1);
    this.reservedBy.set(conn, address);
    conn.on('close', this.releaseOnClose);
    return true;
  }

  /** Gives the connection's place back, if it still holds one. */
  private unreserve(conn: EngineConnection): void {
    const address = this.reservedBy.get(conn);
    if (address === undefined) return;
    conn.off('close', this.releaseOnClose);
    this.reservedBy.delete(conn);
    this.release(address);
  }

  private release(address: string): void {
    const left = (this.perAddress.get(address) ?? 1) - 1;
    if (left > 0) this.perAddress.set(address, left);
    else this.perAddress.delete(address);
  }

  /** The same code a REST call would get, in connect_error's message and data. */
  private refusal(err: unknown): Error {
    const known = knownError(err);
    if (!known) this.deps.logger.error({ err }, 'socket handshake failed');
    const answer = known ?? new AppError(500, 'internal_error');
    return Object.assign(new Error(answer.code), { data: { status: answer.status, code: answer.code } });
  }

  private connected(socket: ClientSocket): void {
    // The handshake (with its headers) is read; the HTTP request it came in on need not stay
    // in memory for the socket's whole life (Socket.IO's "Memory usage" advice).
    (socket.conn as { request: unknown }).request = null;
    // Nor the handshake's headers (every header of the upgrade request, which Socket.IO keeps
    // in the handshake after its request is gone) and auth: authenticate() copied what the
    // socket uses into socket.data.
    socket.handshake.headers = RELEASED;
    socket.handshake.auth = RELEASED;
    this.join(socket, socket.data.userId);
    // Catch-up before live messages: the feed reads what came after lastMessageId first.
    void socket.data.feed.pull();
    socket.on('disconnect', this.onDisconnect);
    for (const [event, handler] of this.handlers) socket.on(event, handler);
    armExpiry(socket);
  }

  private resync(): void {
    for (const sockets of this.byUser.values()) {
      for (const socket of sockets) void socket.data.feed.pull();
    }
  }

  private join(socket: ClientSocket, userId: number): void {
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
    const newest = await em.findOne(
      MessageSchema,
      { userId, typeId: { $ne: MessageType.userSystem } },
      { orderBy: { id: 'desc' }, fields: ['id'] },
    );
    return newest?.id ?? 0;
  }

  private receive(notice: AnyNotice): void {
    if (notice.kind === 'deliveries' || notice.kind === 'inbox') {
      // Only the dashboard's channel counts deliveries and hears of the team's side (notes above all).
      this.operators?.receive(notice);
      return;
    }
    if (notice.kind === 'account') {
      this.deps.serviceCallers.dropAccount(notice.accountId);
      // Its sockets identify their caller again at their next event (socket-events.ts).
      for (const sockets of this.byUser.values()) {
        for (const socket of sockets) if (socket.data.accountId === notice.accountId) dropCaller(socket);
      }
      return;
    }
    if (notice.kind === 'operator') {
      this.operators?.receive(notice);
      return;
    }
    if (notice.kind === 'erased') {
      for (const userId of notice.userIds) this.disconnectErased(userId);
      return;
    }
    if (notice.kind === 'merged') {
      this.operators?.receive(notice);
      void this.moveSockets(notice.fromUserId, notice.toUserId);
      return;
    }
    const sockets = this.byUser.get(notice.userId);
    if (notice.kind === 'deviceMoved') {
      // Nothing for operators: the conversations themselves did not change.
      for (const socket of sockets ?? []) if (socket.data.deviceId === notice.deviceId) dropCaller(socket);
      return;
    }
    this.operators?.receive(notice);
    if (!sockets) return;
    if (notice.kind === 'message') {
      void this.offer([...sockets], notice.messageId, notice.prevId, notice.message);
      return;
    }
    // Encoded once for all of the user's sockets on this node.
    const all = this.io?.local.to([...sockets].map((socket) => socket.id));
    if (notice.kind === 'agent') all?.emit('agent', { agent: presentAgent(notice.agent) });
    if (notice.kind === 'agentTyping') {
      all?.emit('agentTyping', { agent: presentAgent(notice.agent, notice.typingUntil), isTyping: notice.isTyping });
    }
    if (notice.kind === 'messageStatus') all?.emit('messageStatus', { messages: notice.messages });
  }

  /**
   * A notice from another node carries ids only. Sockets right behind it get the message
   * (read once for all of them, unless written here); sockets that are elsewhere (a gap, a
   * lost notice) read on from where they are.
   */
  private async offer(sockets: ClientSocket[], messageId: number, prevId: number | null, written?: Message): Promise<void> {
    const direct: ClientSocket[] = [];
    for (const socket of sockets) {
      const { feed } = socket.data;
      if (messageId <= feed.lastSent) continue;
      if (feed.continues(prevId)) direct.push(socket);
      else void feed.pull();
    }
    if (direct.length === 0) return;
    try {
      const message = written ?? (await this.deps.em().findOne(MessageSchema, { id: messageId }));
      const targets = message ? direct.filter((socket) => socket.data.feed.take(message, prevId)) : [];
      const [first] = targets;
      // Presented and encoded once for all of them, as a Socket.IO broadcast does; local,
      // because every node offers its own sockets.
      if (message && first)
        this.io?.local.to(targets.map((socket) => socket.id)).emit('message', presentClientMessage(message, first.data.accountId));
    } catch (err) {
      this.deps.logger.warn({ err }, 'socket message read failed');
    }
  }

  /**
   * An erased user's sockets: told first, with the code REST now answers their device, so a
   * client registers it again (a fresh conversation), then disconnected, so no event of theirs
   * runs for a user that is gone.
   */
  private disconnectErased(userId: number): void {
    const sockets = this.byUser.get(userId);
    if (!sockets) return;
    this.byUser.delete(userId);
    for (const socket of sockets) {
      dropCaller(socket);
      socket.emit('unauthorized', { code: 'device_not_found' });
      socket.disconnect(true);
    }
  }

  /**
   * After a merge, on every node, the anonymous user's sockets that presented the registered
   * user's header at their handshake belong to that user (and live no longer than the header:
   * armExpiry). The others carry a device id alone, which no longer opens this conversation
   * over REST: they are told the code REST answers (authorization_required, or
   * authorization_mismatch for another customer's header) and disconnected, never moved.
   */
  private async moveSockets(fromUserId: number, toUserId: number): Promise<void> {
    const sockets = this.byUser.get(fromUserId);
    if (!sockets) return;
    this.byUser.delete(fromUserId);
    // At once, not after the reads below: an event meanwhile must not write as the anonymous caller.
    for (const socket of sockets) dropCaller(socket);
    const em = this.deps.em();
    let customer: string | null | undefined;
    let newest: number;
    try {
      customer = (await em.findOne(UserSchema, { id: toUserId }, { fields: ['uniqueIdentifier'] }))?.uniqueIdentifier;
      newest = await this.newest(em, toUserId);
    } catch (err) {
      // Not knowing whose the conversation is, none is moved into it: their connections are
      // closed (not a Socket.IO disconnect), so clients reconnect and are judged at the handshake.
      this.deps.logger.warn({ err }, 'merged user not read: its sockets are closed');
      for (const socket of sockets) socket.conn.close();
      return;
    }
    for (const socket of sockets) {
      if (!customer || socket.data.identification !== customer) {
        socket.emit('unauthorized', {
          code: socket.data.identification === undefined ? 'authorization_required' : 'authorization_mismatch',
        });
        socket.disconnect(true);
        continue;
      }
      socket.data.userId = toUserId;
      socket.data.feed.restart(newest);
      this.join(socket, toUserId);
      // The conversation the client shows changed: it reloads the history over REST.
      socket.emit('merged', { userId: toUserId });
    }
  }
}

/**
 * The Redis adapter, except that counting the nodes (PUBSUB NUMSUB, behind fetchSockets,
 * serverSideEmitWithAck, allRooms and broadcasts with acknowledgements, some of which do not
 * catch it) never rejects: while Redis is away, this node counts itself alone and answers for
 * its own sockets.
 */
function tolerantAdapter(base: ReturnType<typeof createAdapter>, logger: Logger): ReturnType<typeof createAdapter> {
  // Called with `new` by Socket.IO: the object returned is the adapter.
  return function (nsp: Parameters<ReturnType<typeof createAdapter>>[0]) {
    const adapter = base(nsp);
    const serverCount = adapter.serverCount.bind(adapter);
    adapter.serverCount = () =>
      serverCount().catch((err: unknown) => {
        logger.warn({ err: (err as Error).message }, 'socket.io nodes not counted: redis unavailable; this node only');
        return 1;
      });
    return adapter;
  };
}
