// Who is calling the Service API: the Service owning the API key, and the users it may touch
// (its own account's; another account's user is "not found", never "forbidden"). The Service
// and account are snapshots (see db/snapshots.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, ServiceSchema, UserSchema, type Account, type Service, type User } from '../../db/entities/index.ts';
import { refuseMerged } from '../../conversations/users.ts';
import { forbidden, notFound, unauthorized } from '../../errors.ts';
import { snapshot } from '../../db/snapshots.ts';
import { sha256Hex } from '../../security/random.ts';

export interface ServiceCaller {
  service: Service;
  account: Account;
}

/** The key, its Service and the Service's account in one statement (every Service API call starts here). */
export async function authenticateService(em: EntityManager, apiKey: string | undefined): Promise<ServiceCaller> {
  if (!apiKey) throw unauthorized('missing_api_key');
  const [row] = await em.getConnection().execute<Array<Record<'service' | 'account', Record<string, unknown>>>>(
    `select row_to_json(s) as service, row_to_json(a) as account
     from service_api_keys k join services s on s.id = k.service_id join accounts a on a.id = s.account_id
     where k.key_hash = ? and k.revoked_at is null`,
    [sha256Hex(apiKey)],
  );
  if (!row) throw unauthorized('invalid_api_key');
  const metadata = em.getMetadata();
  const service = snapshot(metadata, ServiceSchema, row.service);
  if (service.disabledReason === 'operator') throw forbidden('service_disabled');
  return { service, account: snapshot(metadata, AccountSchema, row.account) };
}

/** A user of the caller's account; a merged anonymous id answers user_merged with the new id. */
export async function userForService(em: EntityManager, caller: ServiceCaller, userId: number): Promise<User> {
  const user = await em.findOne(UserSchema, { id: userId, accountId: caller.account.id });
  if (!user) throw notFound('user_not_found');
  refuseMerged(user);
  return user;
}
