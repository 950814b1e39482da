// Merging an anonymous conversation into the registered user's at login (spec, States and
// transitions): messages and uploads move, the anonymous user stays as a tombstone pointing
// to the registered one, and the owner Services hear of the new id.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account, User } from '../db/entities/index.ts';
import { enqueue } from '../deliveries/outbox.ts';
import { clientMergingPayload } from '../presenters/webhook-payloads.ts';

export async function mergeAnonymousInto(
  em: EntityManager,
  account: Account,
  anonymous: User,
  registered: User,
  requestUrl: string | null,
): Promise<void> {
  const connection = em.getConnection();
  const trx: unknown = em.getTransactionContext();
  // Message ids grow with time, so the merged conversation reads in time order by id.
  await connection.execute('update messages set user_id = ? where user_id = ?', [registered.id, anonymous.id], 'run', trx);
  await connection.execute('update media set user_id = ? where user_id = ?', [registered.id, anonymous.id], 'run', trx);
  anonymous.mergedIntoUserId = registered.id;
  await em.flush();

  // Both owners hear of it: the one that talked to the anonymous user, and the registered
  // user's, when they differ. On the anonymous user's chain, so it follows what was sent about
  // the anonymous user before.
  await enqueue(em, {
    kind: 'client_merging',
    payload: clientMergingPayload({ account, oldUserId: anonymous.id, newUser: registered, requestUrl }),
    recipients: [anonymous.ownerServiceId, registered.ownerServiceId],
    orderingKey: anonymous.id,
  });
}
