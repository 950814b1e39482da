// Merging an anonymous conversation into the registered user's at login (spec, States and
// transitions): messages, uploads and contact details move, the anonymous user stays as a
// tombstone pointing to the registered one, and the owner Services hear of the new id.
import type { Transaction } from '../db/tx/transaction.ts';
import { UserSchema, type Account, type User } from '../db/entities/index.ts';
import { standbyOf } from './standby.ts';
import { enqueue } from '../deliveries/outbox.ts';
import { clientMergingPayload } from '../presenters/webhook-payloads.ts';
import { moveConversation } from './messages.ts';
import { lockUsers } from './users.ts';

export interface LoginMerge {
  account: Account;
  anonymous: User;
  /** The customer's registered user, found under the customer lock; null when this login makes it. */
  registered: User | null;
  /** Makes the registered user from the anonymous one as it stands under the lock. */
  createRegistered(from: User): Promise<User>;
  requestUrl: string | null;
}

/**
 * The contact details the visitor left before signing in go with the conversation, unless the
 * customer's user has its own (the backend's, or given earlier: those stay). An unsubscription
 * goes with them either way: it is the same person who asked.
 */
function carryContact(anonymous: User, registered: User): void {
  if (anonymous.emailUnsubscribedAt != null) registered.emailUnsubscribedAt ??= anonymous.emailUnsubscribedAt;
  if (anonymous.contactSource == null || registered.contactSource != null) return;
  registered.email = anonymous.email ?? null;
  registered.contactName = anonymous.contactName ?? null;
  registered.contactLanguage = anonymous.contactLanguage ?? null;
  registered.contactSource = anonymous.contactSource;
  registered.contactUpdatedAt = anonymous.contactUpdatedAt ?? new Date();
}

/**
 * Inside the caller's transaction. Returns the registered user the conversation now lives on,
 * or null, doing nothing, when the anonymous user had already been merged.
 */
export async function mergeAnonymousInto(tx: Transaction, merge: LoginMerge): Promise<User | null> {
  const { em } = tx;
  const { account, anonymous } = merge;
  // Every message writer locks its users (lockUsers: FOR UPDATE, in id order) and writes
  // under that lock. Taking the same locks, in the same order, before reading or moving
  // anything means that a message written meanwhile has committed before the move reads
  // (and moves with the rest), or is written after the merge commits and follows the
  // tombstone (lockForMessages in messages.ts). A registered user made below is seen by no one else before
  // the commit, so locking it later breaks no order.
  const existing = merge.registered;
  const ids = existing ? [anonymous.id, existing.id] : [anonymous.id];
  await lockUsers(tx, ids);
  // What was read before the lock may be stale: the current agent, the owner, or the merge itself.
  await em.find(UserSchema, { id: { $in: ids } }, { refresh: true });
  if (anonymous.mergedIntoUserId != null) return null;
  const registered = existing ?? (await merge.createRegistered(anonymous));

  await moveConversation(em, anonymous.id, registered.id);
  anonymous.mergedIntoUserId = registered.id;
  carryContact(anonymous, registered);
  await em.flush();

  // Both owners hear of it: the one that talked to the anonymous user, and the registered
  // user's, when they differ. On the anonymous user's chain, so it follows what was sent about
  // the anonymous user before.
  await enqueue(tx, {
    kind: 'client_merging',
    payload: clientMergingPayload({ account, oldUserId: anonymous.id, newUser: registered, requestUrl: merge.requestUrl }),
    recipients: [anonymous.ownerServiceId, registered.ownerServiceId],
    standby: await standbyOf(em, anonymous.id),
    orderingKey: anonymous.id,
  });
  return registered;
}
