// PUT /users/{userId}/owner: a Service hands a user to another Service of the account. Only a
// real change is announced, to the old and to the new owner, as a changeOwner action.
import { recordAudit } from '../audit/entries.ts';
import type { AuditNote } from '../audit/context.ts';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ServiceSchema, UserSchema, type Account, type User } from '../db/entities/index.ts';
import { enqueue } from '../deliveries/outbox.ts';
import { notFound } from '../errors.ts';
import { notify } from './notices.ts';
import { changeOwnerPayload, type OwnerChangeInitiator } from '../presenters/webhook-payloads.ts';

export async function changeOwner(
  em: EntityManager,
  input: { account: Account; initiatedBy: OwnerChangeInitiator; userId: number; newOwnerIdentification: string },
  audit?: AuditNote,
): Promise<{ user: User; changed: boolean }> {
  return em.transactional(async (tx) => {
    // Locked, so two changes at once announce two consistent transitions, not two from the same owner.
    // Erased (GDPR) while this waited for the lock: as unknown as any other id.
    const user = await tx.findOne(UserSchema, { id: input.userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!user) throw notFound('user_not_found');
    const newOwner = await tx.findOne(ServiceSchema, {
      identification: input.newOwnerIdentification,
      accountId: input.account.id,
    });
    if (!newOwner) throw notFound('service_not_found');
    if (newOwner.id === user.ownerServiceId) return { user, changed: false };
    const oldOwner = await tx.findOneOrFail(ServiceSchema, { id: user.ownerServiceId });
    user.ownerServiceId = newOwner.id;
    await tx.flush();
    // The inbox's views read the owner beside the team's state (conversations/inbox.ts).
    await tx
      .getConnection()
      .execute(
        'update conversation_states set owner_service_id = ?, updated_at = now() where user_id = ?',
        [newOwner.id, user.id],
        'run',
        tx.getTransactionContext(),
      );
    // The inbox has no webhook, so the outbox writes it nothing: the dashboard hears of it instead,
    // as of a change to any other owner (the old owner, a webhook Service, gets its delivery).
    notify(tx, { kind: 'inbox', userId: user.id, change: 'owner' });
    await enqueue(tx, {
      kind: 'action',
      payload: changeOwnerPayload({ account: input.account, user, oldOwner, newOwner, initiatedBy: input.initiatedBy }),
      recipients: [oldOwner.id, newOwner.id],
      orderingKey: user.id,
    });
    if (audit) {
      await recordAudit(tx, audit.context, {
        action: audit.action,
        accountId: user.accountId,
        target: { userId: user.id },
        changed: ['ownerServiceId'],
      });
    }
    return { user, changed: true };
  });
}
