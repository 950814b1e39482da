// Owner changes: PUT /users/{userId}/owner (a Service hands a user to another Service of the
// account), the dashboard's take-over and hand-back, and the handover protocol's steps
// (handover.ts). Only a real change is announced, to the old and to the new owner, as a
// changeOwner action, with standby copies to the conversation's standby Services.
import { transaction } from '../db/tx/run.ts';
import type { Transaction } from '../db/tx/transaction.ts';
import { recordNote } from '../audit/entries.ts';
import type { AuditNote } from '../audit/context.ts';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ServiceSchema, UserSchema, type Account, type Service, type User } from '../db/entities/index.ts';
import { enqueue } from '../deliveries/outbox.ts';
import { notFound } from '../errors.ts';
import { notify } from './notices.ts';
import { recordParticipants, standbyOf } from './standby.ts';
import { changeOwnerPayload, type HandoverNote, type OwnerChangeInitiator } from '../presenters/webhook-payloads.ts';

export async function changeOwner(
  em: EntityManager,
  input: { account: Account; initiatedBy: OwnerChangeInitiator; userId: number; newOwnerIdentification: string },
  audit?: AuditNote,
): Promise<{ user: User; changed: boolean }> {
  return transaction(em, async (tx) => {
    // Locked, so two changes at once announce two consistent transitions, not two from the same owner.
    // Erased (GDPR) while this waited for the lock: as unknown as any other id.
    const user = await tx.em.findOne(UserSchema, { id: input.userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!user) throw notFound('user_not_found');
    const newOwner = await tx.em.findOne(ServiceSchema, {
      identification: input.newOwnerIdentification,
      accountId: input.account.id,
    });
    if (!newOwner) throw notFound('service_not_found');
    if (newOwner.id === user.ownerServiceId) return { user, changed: false };
    const oldOwner = await tx.em.findOneOrFail(ServiceSchema, { id: user.ownerServiceId });
    await moveOwner(tx, { account: input.account, user, oldOwner, newOwner, initiatedBy: input.initiatedBy, handover: null });
    await recordNote(tx.em, audit, {
      accountId: user.accountId,
      target: { userId: user.id },
      changed: ['ownerServiceId'],
    });
    return { user, changed: true };
  });
}

/**
 * Makes `newOwner` the owner of the locked `user`, in the caller's transaction: the inbox's
 * views, the participants, the handover state (a pending offer ends; the step is remembered for
 * idempotent repeats) and the changeOwner deliveries.
 */
export async function moveOwner(
  tx: Transaction,
  input: {
    account: Pick<Account, 'id' | 'identification' | 'defaultServiceId'>;
    user: User;
    oldOwner: Service;
    newOwner: Service;
    initiatedBy: OwnerChangeInitiator;
    handover: HandoverNote | null;
  },
): Promise<void> {
  const { user, oldOwner, newOwner } = input;
  user.ownerServiceId = newOwner.id;
  await tx.em.flush();
  const connection = tx.em.getConnection();
  // The inbox's views read the owner beside the team's state (conversations/inbox.ts).
  await connection.execute(
    'update conversation_states set owner_service_id = ?, updated_at = now() where user_id = ?',
    [newOwner.id, user.id],
    'run',
    tx.em.getTransactionContext(),
  );
  const lastBy = 'operator' in input.initiatedBy ? null : input.initiatedBy.id;
  await connection.execute(
    `insert into conversation_handovers (user_id, last_step, last_by_service_id) values (?, ?, ?)
     on conflict (user_id) do update set pending_service_id = null, offered_by_service_id = null, offer_reason = null,
       offer_metadata = null, offer_expires_at = null, offer_expiry_told_at = null, last_step = excluded.last_step,
       last_by_service_id = excluded.last_by_service_id, updated_at = now()`,
    [user.id, input.handover?.step ?? 'pass', lastBy],
    'run',
    tx.em.getTransactionContext(),
  );
  await recordParticipants(tx, user.id, [oldOwner.id, newOwner.id]);
  // The inbox has no webhook, so the outbox writes it nothing: the dashboard hears of it instead,
  // as of a change to any other owner (the old owner, a webhook Service, gets its delivery).
  notify(tx, { kind: 'inbox', userId: user.id, change: 'owner' });
  await enqueue(tx, {
    kind: 'action',
    payload: changeOwnerPayload({
      account: input.account,
      user,
      oldOwner,
      newOwner,
      initiatedBy: input.initiatedBy,
      handover: input.handover,
    }),
    recipients: [oldOwner.id, newOwner.id],
    standby: await standbyOf(tx, user.id),
    orderingKey: user.id,
  });
}
