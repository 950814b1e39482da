// Who is calling the Client API: the account (from the identification header), the device
// id, and the registered identity when an authorization header is given.
import { prepared } from '../../db/prepared.ts';
import DataLoader from 'dataloader';
import type { MetadataStorage } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, DeviceSchema, UserSchema, type Account, type Device, type User } from '../../db/entities/index.ts';
import { snapshot } from '../../db/snapshots.ts';
import { AppError, notFound } from '../../errors.ts';
import type { CallerSnapshot } from '../../conversations/caller-snapshot.ts';
import { verifyAuthorization, type RegisteredIdentity } from './authorization.ts';
import { parseIdentification } from './identification.ts';
import { readCallersSql, toCallerRows, type CallerKey, type CallerRows, type ReadCallersRow } from './sql/read-callers.ts';

export interface ClientCaller {
  account: Readonly<Account>;
  deviceId: string;
  identity: RegisteredIdentity | undefined;
  /** The device and its user as they stood when the call was identified; null for an unknown device. */
  registered: { device: Readonly<Device>; user: Readonly<User> } | null;
}

export interface CallerHeaders {
  identification: string | undefined;
  authorization: string | undefined;
  /** The browser page's origin, if any: checked against the account's allowed origins. */
  origin?: string | undefined;
}

/** 403 origin_not_allowed when the account lists origins and a browser page of another calls. */
function checkOrigin(account: Account, origin: string | undefined): void {
  const allowed = account.settings.allowedOrigins ?? [];
  if (origin === undefined || allowed.length === 0) return;
  if (!allowed.includes(origin.toLowerCase())) throw new AppError(403, 'origin_not_allowed');
}

/**
 * Every Client API call and every socket event starts here: the account, the device and its
 * user, read in one statement. Calls arriving in the same turn of the event loop share that
 * statement (a DataLoader without a cache: each call still reads after it arrived). The rows
 * are snapshots (see db/snapshots.ts).
 */
export class ClientCallers {
  /** Without a cache, DataLoader needs no string keys: each load is one row of the batch. */
  private readonly loader: DataLoader<CallerKey, CallerRows | null>;
  private readonly metadata: MetadataStorage;
  /** Raw statements only (prepared.ts): no entity manager of its own (and no unit of work) per read. */
  private readonly root: EntityManager;

  constructor(
    em: () => EntityManager,
    /** How far ahead a registered user's header may be valid (its `validUntil`). */
    private readonly maxLifetimeSeconds: number,
  ) {
    const root = em();
    this.metadata = root.getMetadata();
    this.root = root;
    this.loader = new DataLoader((keys) => this.read(keys), {
      cache: false,
      // Past the I/O callbacks of this turn, so requests that arrived together are read together.
      batchScheduleFn: (callback) => setImmediate(callback),
      maxBatchSize: 500,
    });
  }

  async identify(headers: CallerHeaders): Promise<ClientCaller> {
    const { accountIdentification, deviceId } = parseIdentification(headers.identification);
    const row = await this.loader.load({ accountIdentification, deviceId });
    if (!row?.account) throw notFound('account_not_found');
    const account = snapshot(this.metadata, AccountSchema, row.account);
    checkOrigin(account, headers.origin);
    const identity = verifyAuthorization(headers.authorization, account, { maxLifetimeSeconds: this.maxLifetimeSeconds });
    const registered =
      row.device && row.user
        ? { device: snapshot(this.metadata, DeviceSchema, row.device), user: snapshot(this.metadata, UserSchema, row.user) }
        : null;
    return { account, deviceId, identity, registered };
  }

  private async read(keys: readonly CallerKey[]): Promise<Array<CallerRows | null>> {
    return toCallerRows(keys.length, await prepared<ReadCallersRow>(this.root, readCallersSql(keys)));
  }
}

/**
 * The caller's conversation, for every call but POST /devices. A registered user's device
 * must present that user's authorization: a device id alone never opens a customer's history.
 */
export function openConversation(caller: ClientCaller): CallerSnapshot {
  if (!caller.registered) throw notFound('device_not_found');
  const { device, user } = caller.registered;
  if (user.kind === 'registered') {
    if (!caller.identity) throw new AppError(401, 'authorization_required');
    if (caller.identity.identification !== user.uniqueIdentifier) throw new AppError(403, 'authorization_mismatch');
  }
  return { account: caller.account, device, user };
}
