// The operators' live channel: Socket.IO namespace /operators, for the dashboard. A socket
// authenticates with an operator's bearer token (handshake `auth.token`) and joins the room of
// every account where the operator may read conversations (`everywhere` for a grant on every
// account). It hears of changes through the same notices as chat sockets (the gateway hands each
// one here), as `conversation` events naming the user and what changed, and `deliveries` events
// naming the Services whose delivery outcomes were committed (at most one a second per account,
// the last always sent, so a busy Service does not make every dashboard read its numbers a hundred
// times a second); the dashboard then reads the Admin API, which applies the permissions again,
// so no content travels on this channel.
//
// A socket lasts no longer than what let it in: it ends (an `ended` event with the code a
// request would get, then a disconnect) when its session expires, and, on every node, when an
// `operator` notice says the operator signed out, was disabled or had their grants replaced and
// the token or the permission no longer holds; with fewer accounts left, it leaves their rooms.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DefaultEventsMap, Namespace, Socket } from 'socket.io';
import type { Notice, OperatorNotice } from '../conversations/notices.ts';
import type { Ended, OperatorEvents } from '../contracts/operator-events.ts';
import { authenticateOperator, type AuthenticatedOperator } from '../tenancy/operators.ts';
import { allows } from '../tenancy/permissions.ts';

interface OperatorSocketData {
  operatorId: number;
  /** Kept to check the session again when the operator changes. */
  token: string;
  expiry: NodeJS.Timeout;
  /** `operator` notices this node had received before the handshake read the session. */
  noticesBefore: number;
}

type OperatorSocket = Socket<Record<string, never>, OperatorEvents, DefaultEventsMap, OperatorSocketData>;

/** The /operators namespace: its sockets' data is written by OperatorChannel only (at the handshake). */
export type OperatorNamespace = Namespace<Record<string, never>, OperatorEvents, DefaultEventsMap, OperatorSocketData>;

const EVERYWHERE = 'everywhere';

/** Users' and Services' accounts never change: remembered, up to a bound, so a busy node asks once for each. */
const ACCOUNT_CACHE = 10_000;

/** The least time between two `deliveries` events of one account. */
const DELIVERIES_EVERY_MS = 1000;

export class OperatorChannel {
  private readonly accountOfUser = new Map<number, number>();
  private readonly accountOfService = new Map<number, number>();
  /** Accounts whose last `deliveries` event went out less than DELIVERIES_EVERY_MS ago, with the Services changed since. */
  private readonly holding = new Map<number, Set<number>>();
  /** `operator` notices received: one that came while a handshake read the session has that socket checked again. */
  private operatorNotices = 0;

  constructor(
    private readonly namespace: OperatorNamespace,
    private readonly em: () => EntityManager,
    private readonly onError: (err: unknown) => void,
  ) {
    namespace.use((socket, next) => {
      this.authenticate(socket).then(
        () => next(),
        (err: unknown) => next(err instanceof Error ? err : new Error(String(err))),
      );
    });
    namespace.on('connection', (socket) => {
      if (socket.data.noticesBefore !== this.operatorNotices) this.checkAgain(socket).catch(this.onError);
    });
  }

  /** Every notice of this node (local or from another node); each node tells its own sockets. */
  receive(notice: Notice | OperatorNotice): void {
    if (notice.kind === 'operator') {
      this.operatorNotices++;
      for (const socket of this.namespace.sockets.values()) {
        if (socket.data.operatorId === notice.operatorId) this.checkAgain(socket).catch(this.onError);
      }
      return;
    }
    if (notice.kind === 'deliveries') {
      for (const serviceId of notice.serviceIds) {
        this.serviceAccount(serviceId).then((accountId) => {
          if (accountId !== null) this.deliveriesChanged(accountId, serviceId);
        }, this.onError);
      }
      return;
    }
    if (this.namespace.sockets.size === 0 || notice.kind === 'agentTyping') return;
    const userId = notice.kind === 'merged' ? notice.toUserId : notice.userId;
    this.account(userId).then((accountId) => {
      if (accountId === null) return;
      const change = notice.kind === 'inbox' ? notice.change : notice.kind;
      this.namespace.local.to([`account:${accountId}`, EVERYWHERE]).emit('conversation', { accountId, userId, change });
    }, this.onError);
  }

  /** Emits at once, then holds the account's next changes until DELIVERIES_EVERY_MS has passed. */
  private deliveriesChanged(accountId: number, serviceId: number): void {
    const held = this.holding.get(accountId);
    if (held) {
      held.add(serviceId);
      return;
    }
    this.emitDeliveries(accountId, [serviceId]);
  }

  private emitDeliveries(accountId: number, serviceIds: number[]): void {
    this.namespace.local.to([`account:${accountId}`, EVERYWHERE]).emit('deliveries', { accountId, serviceIds });
    this.holding.set(accountId, new Set());
    setTimeout(() => {
      const held = this.holding.get(accountId);
      this.holding.delete(accountId);
      if (held && held.size > 0)
        this.emitDeliveries(
          accountId,
          [...held].sort((a, b) => a - b),
        );
    }, DELIVERIES_EVERY_MS).unref();
  }

  private async authenticate(socket: OperatorSocket): Promise<void> {
    const noticesBefore = this.operatorNotices;
    const token = (socket.handshake.auth as Record<string, unknown>).token;
    const operator = typeof token === 'string' && token !== '' ? await authenticateOperator(this.em(), token) : null;
    if (!operator) throw Object.assign(new Error('invalid_token'), { data: { status: 401, code: 'invalid_token' } });
    const rooms = roomsOf(operator);
    if (rooms.length === 0) throw Object.assign(new Error('permission_denied'), { data: { status: 403, code: 'permission_denied' } });
    await socket.join(rooms);
    // At most 2^31 - 1 ms (about 24 days) for a timer; sessions last hours.
    const untilExpiry = Math.min(Math.max(0, operator.sessionExpiresAt.getTime() - Date.now()), 2 ** 31 - 1);
    const expiry = setTimeout(() => end(socket, 'invalid_token'), untilExpiry).unref();
    socket.data = { operatorId: operator.id, token: token as string, expiry, noticesBefore };
    socket.on('disconnect', () => clearTimeout(expiry));
  }

  /** The operator changed: the socket ends, or keeps only the rooms the grants now allow. */
  private async checkAgain(socket: OperatorSocket): Promise<void> {
    const operator = await authenticateOperator(this.em(), socket.data.token);
    if (!operator) return end(socket, 'invalid_token');
    const rooms = roomsOf(operator);
    if (rooms.length === 0) return end(socket, 'permission_denied');
    for (const room of [...socket.rooms]) {
      if (room !== socket.id && !rooms.includes(room)) await socket.leave(room);
    }
    await socket.join(rooms);
  }

  private serviceAccount(serviceId: number): Promise<number | null> {
    return this.cachedAccount(this.accountOfService, 'services', serviceId);
  }

  private account(userId: number): Promise<number | null> {
    return this.cachedAccount(this.accountOfUser, 'users', userId);
  }

  /** The account of a user or Service row, asked once and remembered in `cache`. */
  private async cachedAccount(cache: Map<number, number>, table: 'users' | 'services', id: number): Promise<number | null> {
    const known = cache.get(id);
    if (known !== undefined) return known;
    const row = await this.em()
      .getConnection()
      .execute<Array<{ account_id: number }>>(`select account_id from ${table} where id = ?`, [id]);
    const accountId = row[0]?.account_id ?? null;
    if (accountId === null) return null;
    if (cache.size >= ACCOUNT_CACHE) cache.clear();
    cache.set(id, accountId);
    return accountId;
  }
}

/** The rooms an operator's socket may be in: every account where they may read conversations. */
function roomsOf(operator: AuthenticatedOperator): string[] {
  if (allows(operator.grants, 'conversations:read', null)) return [EVERYWHERE];
  const accounts = new Set(operator.grants.flatMap((g) => (g.accountId === null ? [] : [g.accountId])));
  return [...accounts].filter((id) => allows(operator.grants, 'conversations:read', id)).map((id) => `account:${id}`);
}

/** Tells the socket why (the code a request would get) and disconnects it; the page does not reconnect. */
function end(socket: OperatorSocket, code: Ended['code']): void {
  if (socket.disconnected) return;
  socket.emit('ended', { code });
  // This namespace only: a connection may carry other namespaces' sockets.
  socket.disconnect();
}
