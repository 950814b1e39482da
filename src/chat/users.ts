// Chat users: anonymous ones (one device, no identifier) and registered ones (known by the
// uniqueIdentifier a customer's backend put in the authorization header).
import type { EntityManager } from '@mikro-orm/postgresql';
import { UserSchema, type Account, type User } from '../db/entities/index.ts';
import { AppError, conflict } from '../http/errors.ts';
import { customerLock, lockName } from './locks.ts';

export function ownerFor(account: Account): number {
  if (account.defaultServiceId == null) throw conflict('account_has_no_service');
  return account.defaultServiceId;
}

/** A merged anonymous id is a tombstone: callers are told the id the conversation lives on under. */
export function refuseMerged(user: Pick<User, 'mergedIntoUserId'>): void {
  if (user.mergedIntoUserId != null) throw new AppError(409, 'user_merged', [], { userId: user.mergedIntoUserId });
}

export function createAnonymousUser(em: EntityManager, account: Account, info: Record<string, unknown> | null): User {
  return em.create(UserSchema, {
    accountId: account.id,
    kind: 'anonymous',
    uniqueIdentifier: null,
    additionalInformation: info,
    ownerServiceId: ownerFor(account),
    currentAgent: null,
    agentTyping: null,
    agentTypingUntil: null,
    mergedIntoUserId: null,
  });
}

/**
 * The registered user with this identifier, created on first sight (created: true). Locked by
 * name first, so two devices logging in as a new customer at once make one user.
 */
export async function findOrCreateRegisteredUser(
  em: EntityManager,
  account: Account,
  uniqueIdentifier: string,
  defaults: Partial<Pick<User, 'ownerServiceId' | 'currentAgent' | 'additionalInformation'>>,
): Promise<{ user: User; created: boolean }> {
  await lockName(em, customerLock(account.id, uniqueIdentifier));
  const existing = await em.findOne(UserSchema, { accountId: account.id, uniqueIdentifier });
  if (existing) return { user: existing, created: false };
  const user = em.create(UserSchema, {
    accountId: account.id,
    kind: 'registered',
    uniqueIdentifier,
    additionalInformation: defaults.additionalInformation ?? null,
    ownerServiceId: defaults.ownerServiceId ?? ownerFor(account),
    currentAgent: defaults.currentAgent ?? null,
    agentTyping: null,
    agentTypingUntil: null,
    mergedIntoUserId: null,
  });
  await em.flush();
  return { user, created: true };
}
