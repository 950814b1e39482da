// Who is calling the Service API: the Service owning the API key, and the users it may touch
// (its own account's; another account's user is "not found", never "forbidden"). The Service
// and account are snapshots (see db/snapshots.ts).
import { prepared } from '../../db/prepared.ts';
import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, ServiceSchema, UserSchema, type Account, type Service, type User } from '../../db/entities/index.ts';
import { refuseMerged } from '../../conversations/users.ts';
import { forbidden, notFound, unauthorized } from '../../errors.ts';
import { pgTextArray } from '../../db/pg-arrays.ts';
import { snapshot } from '../../db/snapshots.ts';
import { sha256Hex } from '../../security/random.ts';

export interface ServiceCaller {
  service: Service;
  account: Account;
}

type KeyRow = Record<'service' | 'account', Record<string, unknown>>;

/** One loader per database (its root EntityManager): calls of one turn of the event loop share a statement. */
const loaders = new WeakMap<EntityManager, DataLoader<string, KeyRow | null>>();

function loaderOf(em: EntityManager): DataLoader<string, KeyRow | null> {
  let loader = loaders.get(em);
  if (!loader) {
    loader = new DataLoader(
      async (hashes) => {
        const rows = await prepared<KeyRow & { n: number }>(
          em,
          `select k.n, row_to_json(s) as service, row_to_json(a) as account
           from unnest(?::text[]) with ordinality as k(key_hash, n)
           join service_api_keys x on x.key_hash = k.key_hash and x.revoked_at is null
           join services s on s.id = x.service_id join accounts a on a.id = s.account_id`,
          [pgTextArray(hashes)],
        );
        const found = new Map(rows.map((row) => [Number(row.n), row]));
        return hashes.map((_, i) => found.get(i + 1) ?? null);
      },
      // Without a cache (each call reads after it arrived, so a revoked key is refused at once),
      // past the I/O callbacks of this turn, as the Client API's callers (client/caller.ts).
      { cache: false, batchScheduleFn: (callback) => setImmediate(callback), maxBatchSize: 500 },
    );
    loaders.set(em, loader);
  }
  return loader;
}

/**
 * The key, its Service and the Service's account in one statement (every Service API call
 * starts here), shared by the calls that arrive in the same turn of the event loop.
 */
export async function authenticateService(em: EntityManager, apiKey: string | undefined): Promise<ServiceCaller> {
  if (!apiKey) throw unauthorized('missing_api_key');
  const row = await loaderOf(em).load(sha256Hex(apiKey));
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
