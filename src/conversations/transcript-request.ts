// A customer asks for their conversation by email (Client API POST /users/me/transcript): under
// their user's row lock, the address must be known and not unsubscribed, and the conversation
// must have a message; then one email delivery is written (deliveries/outbox.ts), which sends
// every message they can see up to the newest now (email/transcript.ts).
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MessageType, UserSchema } from '../db/entities/index.ts';
import { prepared } from '../db/prepared.ts';
import { transaction } from '../db/tx/run.ts';
import { enqueueTranscript } from '../deliveries/outbox.ts';
import { AppError, notFound } from '../errors.ts';
import { refuseMerged } from './users.ts';

export async function requestTranscript(
  em: EntityManager,
  input: { accountId: number; userId: number },
  /** The rate limit, taken only by a request that would send (a refused one costs nothing). */
  limit: () => Promise<void>,
): Promise<{ deliveryId: string; email: string }> {
  return transaction(em, async (t) => {
    const tx = t.em;
    const user = await tx.findOne(UserSchema, { id: input.userId, accountId: input.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!user) throw notFound('user_not_found');
    refuseMerged(user);
    if (user.email == null) throw new AppError(409, 'email_unknown');
    if (user.emailUnsubscribedAt != null) throw new AppError(409, 'email_unsubscribed');
    const [newest] = await prepared<{ id: string | number | null }>(
      tx,
      `select max(id) as id from messages where user_id = ? and type_id <> ?`,
      [user.id, MessageType.userSystem],
    );
    if (newest?.id == null) throw new AppError(409, 'conversation_empty');
    await limit();
    const deliveryId = await enqueueTranscript(t, { userId: user.id, throughMessageId: Number(newest.id) });
    return { deliveryId, email: user.email };
  });
}
