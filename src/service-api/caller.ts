// Who is calling the Service API: the Service owning the API key, and the users it may touch
// (its own account's; another account's user is "not found", never "forbidden").
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, ServiceApiKeySchema, ServiceSchema, UserSchema, type Account, type Service, type User } from '../db/entities/index.ts';
import { AppError, forbidden, notFound, unauthorized } from '../http/errors.ts';
import { sha256Hex } from '../security/random.ts';

export interface ServiceCaller {
  service: Service;
  account: Account;
}

export async function authenticateService(em: EntityManager, apiKey: string | undefined): Promise<ServiceCaller> {
  if (!apiKey) throw unauthorized('missing_api_key');
  const key = await em.findOne(ServiceApiKeySchema, { keyHash: sha256Hex(apiKey), revokedAt: null });
  if (!key) throw unauthorized('invalid_api_key');
  const service = await em.findOneOrFail(ServiceSchema, { id: key.serviceId });
  if (service.disabledReason === 'operator') throw forbidden('service_disabled');
  const account = await em.findOneOrFail(AccountSchema, { id: service.accountId });
  return { service, account };
}

/** A user of the caller's account; a merged anonymous id answers user_merged with the new id. */
export async function userForService(em: EntityManager, caller: ServiceCaller, userId: number): Promise<User> {
  const user = await em.findOne(UserSchema, { id: userId, accountId: caller.account.id });
  if (!user) throw notFound('user_not_found');
  if (user.mergedIntoUserId != null) {
    throw new AppError(409, 'user_merged', [], { userId: user.mergedIntoUserId });
  }
  return user;
}
