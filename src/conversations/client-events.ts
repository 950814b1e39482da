// Chat events from a client (typing, chat opened) as Event payloads to the owner Service, and
// the server's own stopTyping for a client that went quiet without sending one.
import { transaction } from '../db/tx/run.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, ServiceSchema, UserSchema, type Account, type User } from '../db/entities/index.ts';
import { enqueue } from '../deliveries/outbox.ts';
import type { Logger } from '../logger.ts';
import { notify } from './notices.ts';
import { standbyOf } from './standby.ts';
import { eventPayload, type EventName } from '../presenters/webhook-payloads.ts';

/**
 * The event to the owner and the standby Services; when the owner is the team inbox (no webhook),
 * a notice only the dashboard hears.
 */
export async function sendEvent(
  em: EntityManager,
  account: Pick<Account, 'id' | 'identification'>,
  user: Pick<User, 'id' | 'ownerServiceId' | 'uniqueIdentifier' | 'additionalInformation'>,
  name: EventName,
): Promise<void> {
  await transaction(em, async (tx) => {
    const owner = await tx.em.findOne(ServiceSchema, { id: user.ownerServiceId }, { fields: ['kind'] });
    // The inbox has no webhook (the outbox writes it nothing): the dashboard hears of it instead.
    if (owner?.kind === 'inbox') notify(tx, { kind: 'inbox', userId: user.id, change: name });
    await enqueue(tx, {
      kind: 'event',
      payload: eventPayload(name, account, user),
      recipients: [user.ownerServiceId],
      standby: await standbyOf(tx, user.id),
      orderingKey: user.id,
    });
  });
}

/**
 * One timer per typing user on this node (a widget's requests stay on one node behind the
 * sticky balancer). A node that stops loses its timers: no synthetic stopTyping then.
 */
export class TypingTimeouts {
  private readonly timers = new Map<number, NodeJS.Timeout>();

  constructor(
    private readonly timeoutMs: number,
    private readonly em: () => EntityManager,
    private readonly logger: Logger,
  ) {}

  started(userId: number): void {
    this.stopped(userId);
    const timer = setTimeout(() => {
      this.timers.delete(userId);
      this.expire(userId).catch((err: unknown) => this.logger.warn({ err, userId }, 'typing timeout: stopTyping not sent'));
    }, this.timeoutMs);
    this.timers.set(userId, timer);
  }

  stopped(userId: number): void {
    clearTimeout(this.timers.get(userId));
    this.timers.delete(userId);
  }

  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** Read afresh: the owner may have changed, or the user been merged, since typing began. */
  private async expire(userId: number): Promise<void> {
    const em = this.em();
    const user = await em.findOne(UserSchema, { id: userId });
    if (!user || user.mergedIntoUserId != null) return;
    const account = await em.findOneOrFail(AccountSchema, { id: user.accountId });
    await sendEvent(em, account, user, 'stopTyping');
  }
}
