// Who is calling the Service API: the Service owning the API key, and the users it may touch
// (its own account's; another account's user is "not found", never "forbidden").
import { findAccountUser } from '../../conversations/lookups.ts';
import { prepared } from '../../db/prepared.ts';
import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, ServiceSchema, type Account, type Service, type User } from '../../db/entities/index.ts';
import { refuseMerged } from '../../conversations/users.ts';
import { forbidden, notFound, unauthorized } from '../../errors.ts';
import { snapshot } from '../../db/snapshots.ts';
import { sha256Hex } from '../../security/random.ts';
import { readKeysSql, toKeyRows, type KeyRows, type ReadKeysRow } from './sql/read-keys.ts';

export interface ServiceCaller {
  service: Service;
  account: Account;
}

/**
 * How long a node trusts a key it has read. What the Service API depends on changing (a key
 * revoked, a Service disabled or enabled, another default Service) drops the account's keys
 * on every node at once: its `account` notice (conversations/notices.ts) reaches every node
 * after the commit. This bound covers a notice lost while Redis is away.
 */
const KEY_TTL_MS = 10_000;
/** Keys held at most; past it the cache starts over (keys are per Service: far fewer in practice). */
const MAX_KEYS = 10_000;

interface Held {
  caller: ServiceCaller;
  until: number;
}

/**
 * Every Service API call starts here: the key, its Service and the Service's account, read
 * in one statement shared by the calls that arrive in the same turn of the event loop, then
 * kept for KEY_TTL_MS (a bot answering a conversation calls many times a minute). The Service
 * and account are snapshots (see db/snapshots.ts).
 */
export class ServiceCallers {
  private readonly loader: DataLoader<string, KeyRows | null>;
  /**
   * By the key as the caller sent it: a held key is found without hashing it again (the hash is
   * what the database stores and is looked up by). Only keys that were read are held, for
   * KEY_TTL_MS at most, as the request's own headers hold them while it runs.
   */
  private readonly held = new Map<string, Held>();
  /** Raised by every drop: a read begun before it does not refill the cache with what it read. */
  private generation = 0;

  constructor(private readonly root: EntityManager) {
    this.loader = new DataLoader(
      async (hashes) => {
        return toKeyRows(hashes.length, await prepared<ReadKeysRow>(root, readKeysSql(hashes)));
      },
      // The loader keeps nothing itself (the cache above does, with its drops), and waits
      // past the I/O callbacks of this turn, as the Client API's callers (client/caller.ts).
      { cache: false, batchScheduleFn: (callback) => setImmediate(callback), maxBatchSize: 500 },
    );
  }

  /**
   * The caller of a held key at once, or a promise of it once read: a bot calls with a held key
   * nearly every time, and that path makes no promise (every promise also runs the promise
   * hooks of the ORM's AsyncLocalStorage).
   */
  authenticate(apiKey: string | undefined): ServiceCaller | Promise<ServiceCaller> {
    if (!apiKey) throw unauthorized('missing_api_key');
    const held = this.fresh(apiKey);
    return held ? enabled(held) : this.read(apiKey).then(enabled);
  }

  /** The account, its Services or their keys changed: its keys are read afresh. */
  dropAccount(accountId: number): void {
    this.generation += 1;
    for (const [apiKey, { caller }] of this.held) if (caller.account.id === accountId) this.held.delete(apiKey);
  }

  private fresh(apiKey: string): ServiceCaller | undefined {
    const held = this.held.get(apiKey);
    if (held && held.until > Date.now()) return held.caller;
    if (held) this.held.delete(apiKey);
    return undefined;
  }

  private async read(apiKey: string): Promise<ServiceCaller> {
    const generation = this.generation;
    const row = await this.loader.load(sha256Hex(apiKey));
    // Not kept: an unknown key stays unknown only until it is issued.
    if (!row) throw unauthorized('invalid_api_key');
    const metadata = this.root.getMetadata();
    const caller = { service: snapshot(metadata, ServiceSchema, row.service), account: snapshot(metadata, AccountSchema, row.account) };
    if (generation === this.generation) {
      if (this.held.size >= MAX_KEYS) this.held.clear();
      this.held.set(apiKey, { caller, until: Date.now() + KEY_TTL_MS });
    }
    return caller;
  }
}

function enabled(caller: ServiceCaller): ServiceCaller {
  if (caller.service.disabledReason === 'operator') throw forbidden('service_disabled');
  return caller;
}

/** A user of the caller's account; a merged anonymous id answers user_merged with the new id. */
export async function userForService(em: EntityManager, caller: ServiceCaller, userId: number): Promise<User> {
  const user = await findAccountUser(em, caller.account.id, userId);
  if (!user) throw notFound('user_not_found');
  refuseMerged(user);
  return user;
}
