// Accounts: the tenants. Each has a public identification that clients send and a secret
// with which the customer's backend signs registered-user headers.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, ServiceSchema, UserSchema, type Account, type Service, type User } from '../db/entities/index.ts';
import { alphanumericId, newAuthorizationSecret } from '../security/random.ts';
import type { BusinessHours } from './business-hours.ts';
import type { PrechatForm } from './chat-settings.ts';
import { addInbox } from './services.ts';
import type { AuditNote } from '../audit/context.ts';
import { recordNote } from '../audit/entries.ts';
import { accountChanged, notify } from '../conversations/notices.ts';
import { transaction } from '../db/tx/run.ts';

export interface NewAccount {
  name: string;
}

/** A new account comes with its team inbox (tenancy/services.ts, addInbox), in one transaction. */
export async function createAccount(em: EntityManager, input: NewAccount): Promise<Account> {
  return em.transactional(async (tx) => {
    const account = tx.create(AccountSchema, {
      identification: alphanumericId(16),
      name: input.name,
      authorizationSecret: newAuthorizationSecret(),
      settings: {},
    });
    await tx.flush();
    addInbox(tx, account.id);
    await tx.flush();
    return account;
  });
}

/** Accounts by name; `ids` null: all of them. */
export async function listAccounts(em: EntityManager, ids: number[] | null): Promise<Account[]> {
  return em.find(AccountSchema, ids === null ? {} : { id: { $in: ids } }, { orderBy: { name: 'asc', id: 'asc' } });
}

export interface AccountOverview {
  account: Account;
  /** Its webhook Services. */
  services: Service[];
  /** Its team inbox, if it has one. */
  inbox: Service | null;
}

export async function findAccountOverview(em: EntityManager, accountId: number): Promise<AccountOverview | null> {
  const account = await em.findOne(AccountSchema, { id: accountId });
  if (!account) return null;
  const all = await em.find(ServiceSchema, { accountId }, { orderBy: { id: 'asc' } });
  return { account, services: all.filter((s) => s.kind !== 'inbox'), inbox: all.find((s) => s.kind === 'inbox') ?? null };
}

export interface AccountChanges {
  name?: string | undefined;
  welcomeMessage?: string | null | undefined;
  stickyMessage?: string | null | undefined;
  allowedOrigins?: string[] | undefined;
  requireTwoFactor?: boolean | undefined;
  prechatForm?: PrechatForm | undefined;
  businessHours?: BusinessHours | null | undefined;
  replyTimeMinutes?: number | null | undefined;
}

/**
 * A change to the account, in one transaction with its audit entry; null when the account does
 * not exist. Every node hears of it (accountChanged()): its sockets of the account identify
 * their caller again at their next event, so new allowed origins or a rotated secret reach open
 * conversations at once, not when a socket's kept caller runs out.
 */
function changeAccount(
  em: EntityManager,
  accountId: number,
  audit: AuditNote | undefined,
  details: { changed?: string[] },
  apply: (account: Account) => void,
): Promise<Account | null> {
  return transaction(em, async (tx) => {
    const account = await tx.em.findOne(AccountSchema, { id: accountId });
    if (!account) return null;
    apply(account);
    await tx.em.flush();
    notify(tx, accountChanged(accountId));
    await recordNote(tx.em, audit, { accountId, target: { accountId }, ...details });
    return account;
  });
}

export function updateAccount(em: EntityManager, accountId: number, changes: AccountChanges, audit?: AuditNote): Promise<Account | null> {
  return changeAccount(em, accountId, audit, {}, (account) => {
    if (changes.name !== undefined) account.name = changes.name;
    if (changes.welcomeMessage !== undefined) account.welcomeMessage = changes.welcomeMessage;
    if (changes.stickyMessage !== undefined) account.stickyMessage = changes.stickyMessage;
    if (changes.requireTwoFactor !== undefined) account.requireTwoFactor = changes.requireTwoFactor;
    if (changes.allowedOrigins !== undefined)
      account.settings = { ...account.settings, allowedOrigins: [...new Set(changes.allowedOrigins)] };
    for (const key of ['prechatForm', 'businessHours', 'replyTimeMinutes'] as const)
      if (changes[key] !== undefined) account.settings = { ...account.settings, [key]: changes[key] };
  });
}

/**
 * A new authorization secret, for when the old one may have leaked. The old one still verifies
 * customers' headers for `graceSeconds`, so their backend can switch without signing anyone out.
 */
export function rotateAuthorizationSecret(
  em: EntityManager,
  accountId: number,
  graceSeconds: number,
  audit?: AuditNote,
): Promise<Account | null> {
  return changeAccount(em, accountId, audit, { changed: ['authorizationSecret'] }, (account) => {
    account.previousAuthorizationSecret = account.authorizationSecret;
    account.previousAuthorizationSecretExpiresAt = new Date(Date.now() + graceSeconds * 1000);
    account.authorizationSecret = newAuthorizationSecret();
  });
}

/** The account's users, newest first, merged anonymous tombstones left out. */
export async function listUsers(em: EntityManager, accountId: number, limit: number, beforeId?: number): Promise<User[]> {
  return em.find(
    UserSchema,
    { accountId, mergedIntoUserId: null, ...(beforeId ? { id: { $lt: beforeId } } : {}) },
    { orderBy: { id: 'desc' }, limit },
  );
}

export function findAccount(em: EntityManager, accountId: number): Promise<Account | null> {
  return em.findOne(AccountSchema, { id: accountId });
}

/** An account a record names (a Service's, a user's): it exists, the foreign key says so. */
export function getAccount(em: EntityManager, accountId: number): Promise<Account> {
  return em.findOneOrFail(AccountSchema, { id: accountId });
}

/** By its public identification, or else the first account made (the demo page's). */
export async function findAccountOrFirst(em: EntityManager, identification: string | undefined): Promise<Account | null> {
  if (identification) return em.findOne(AccountSchema, { identification });
  const [first] = await em.find(AccountSchema, {}, { orderBy: { id: 'asc' }, limit: 1 });
  return first ?? null;
}
