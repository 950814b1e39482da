// The operators' live channel: Socket.IO namespace /operators, for the dashboard. A socket
// authenticates with an operator's bearer token (handshake `auth.token`) and joins the room of
// every account where the operator may read conversations (`everywhere` for a grant on every
// account). It hears of changes through the same notices as chat sockets (the gateway hands each
// one here), as `conversation` events naming the user and what changed, and `deliveries` events
// naming the Services whose delivery outcomes were committed (at most one a second per account,
// the last always sent, so a busy Service does not make every dashboard read its numbers a hundred
// times a second); the dashboard then reads the Admin API, which applies the permissions again,
// so no content travels on this channel.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Namespace, Socket } from 'socket.io';
import type { InboxChange, Notice } from '../conversations/notices.ts';
import { authenticateOperator } from '../tenancy/operators.ts';
import { allows } from '../tenancy/permissions.ts';

export interface ConversationChange {
  accountId: number;
  userId: number;
  /** InboxChange: the owner, assignee or status changed, or a note was written (only the dashboard hears of these). */
  change: 'message' | 'agent' | 'messageStatus' | 'merged' | InboxChange;
}

export interface DeliveriesChange {
  accountId: number;
  serviceIds: number[];
}

interface OperatorEvents {
  conversation(change: ConversationChange): void;
  deliveries(change: DeliveriesChange): void;
}

type OperatorSocket = Socket<Record<string, never>, OperatorEvents>;

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

  constructor(
    private readonly namespace: Namespace<Record<string, never>, OperatorEvents>,
    private readonly em: () => EntityManager,
    private readonly onError: (err: unknown) => void,
  ) {
    namespace.use((socket, next) => {
      this.authenticate(socket).then(
        () => next(),
        (err: unknown) => next(err instanceof Error ? err : new Error(String(err))),
      );
    });
  }

  /** Every notice of this node (local or from another node); each node tells its own sockets. */
  receive(notice: Notice): void {
    if (this.namespace.sockets.size === 0 || notice.kind === 'agentTyping') return;
    if (notice.kind === 'deliveries') {
      for (const serviceId of notice.serviceIds) {
        this.serviceAccount(serviceId).then((accountId) => {
          if (accountId !== null) this.deliveriesChanged(accountId, serviceId);
        }, this.onError);
      }
      return;
    }
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
    const token = (socket.handshake.auth as Record<string, unknown>).token;
    const operator = typeof token === 'string' && token !== '' ? await authenticateOperator(this.em(), token) : null;
    if (!operator) throw Object.assign(new Error('invalid_token'), { data: { status: 401, code: 'invalid_token' } });
    if (allows(operator.grants, 'conversations:read', null)) {
      await socket.join(EVERYWHERE);
      return;
    }
    const accounts = new Set(operator.grants.flatMap((g) => (g.accountId === null ? [] : [g.accountId])));
    const rooms = [...accounts].filter((id) => allows(operator.grants, 'conversations:read', id)).map((id) => `account:${id}`);
    if (rooms.length === 0) throw Object.assign(new Error('permission_denied'), { data: { status: 403, code: 'permission_denied' } });
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
