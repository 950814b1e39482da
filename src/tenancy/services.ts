// Services: the backends attached to an account. Creating one issues its first API key;
// the first Service of an account becomes the account's default.
import { transaction } from '../db/tx/run.ts';
import { recordNote } from '../audit/entries.ts';
import type { AuditNote } from '../audit/context.ts';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  AccountSchema,
  ServiceApiKeySchema,
  ServiceSchema,
  type Service,
  type ServiceApiKey,
  type StandbyMode,
  type WebhookKind,
} from '../db/entities/index.ts';
import { accountChanged, notify } from '../conversations/notices.ts';
import { conflict, validationFailed } from '../errors.ts';
import { handOffConversations } from '../conversations/handover.ts';
import { alphanumericId, newSigningSecret, newToken, sha256Hex } from '../security/random.ts';

export interface NewService {
  name: string;
  webhookUrl?: string | null | undefined;
}

export interface CreatedService {
  service: Service;
  /** Shown once; only its hash is stored. */
  apiKey: string;
  isDefault: boolean;
}

/** Returns null when the account does not exist. */
export async function createService(
  em: EntityManager,
  accountId: number,
  input: NewService,
  audit?: AuditNote,
): Promise<CreatedService | null> {
  return transaction(em, async (tx) => {
    // The row lock makes "first Service becomes default" hold when two are created at once.
    const account = await tx.em.findOne(AccountSchema, { id: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!account) return null;
    const service = tx.em.create(ServiceSchema, {
      accountId,
      name: input.name,
      identification: alphanumericId(16),
      webhookUrl: input.webhookUrl ?? null,
      signingSecret: newSigningSecret(),
    });
    await tx.em.flush();
    const { apiKey } = issueApiKey(tx.em, service.id);
    const isDefault = account.defaultServiceId == null;
    if (isDefault) {
      account.defaultServiceId = service.id;
      notify(tx, accountChanged(accountId));
    }
    await tx.em.flush();
    await recordNote(tx.em, audit, { accountId, target: { serviceId: service.id } });
    return { service, apiKey, isDefault };
  });
}

/** The name an account's team inbox is given when it is made (operators may rename it). */
export const INBOX_NAME = 'Team inbox';

/**
 * The account's team inbox (docs/dashboard.md): a Service of kind `inbox`, with no webhook URL and
 * no API key, answered by operators from the dashboard. Made with the account (createAccount), in
 * its transaction; it is not made the default Service (an operator may choose it).
 */
export function addInbox(em: EntityManager, accountId: number): Service {
  return em.create(ServiceSchema, {
    accountId,
    name: INBOX_NAME,
    kind: 'inbox',
    identification: alphanumericId(16),
    webhookUrl: null,
    // Signs nothing (the inbox receives no webhooks); the column is required of every Service.
    signingSecret: newSigningSecret(),
  });
}

/** The account's inbox, or null (none was made: an account made before the inbox, before its migration). */
export async function findInbox(em: EntityManager, accountId: number): Promise<Service | null> {
  return em.findOne(ServiceSchema, { accountId, kind: 'inbox' });
}

/** What only a webhook Service has (a webhook URL, API keys, a signing secret, test events) is refused for the inbox. */
export function refuseInbox(service: Pick<Service, 'kind'>, code: 'inbox_has_no_webhook' | 'inbox_has_no_api_keys'): void {
  if (service.kind === 'inbox') throw conflict(code);
}

/** Adds an API key to the Service (flushed by the caller); `apiKey` is the only plain copy there is. */
export function issueApiKey(em: EntityManager, serviceId: number): { apiKey: string; key: ServiceApiKey } {
  const apiKey = newToken('pk');
  const key = em.create(ServiceApiKeySchema, { serviceId, keyHash: sha256Hex(apiKey), prefix: apiKey.slice(0, 10) });
  return { apiKey, key };
}

export interface ServiceChanges {
  name?: string | undefined;
  webhookUrl?: string | null | undefined;
  enabled?: boolean | undefined;
  standby?: StandbyMode | undefined;
  webhookKinds?: WebhookKind[] | undefined;
  /** The identification of another Service of the account, or null. */
  handoverNext?: string | null | undefined;
}

/** Returns null when the Service does not exist. */
export async function updateService(
  em: EntityManager,
  serviceId: number,
  changes: ServiceChanges,
  audit?: AuditNote,
): Promise<Service | null> {
  return transaction(em, async (tx) => {
    const service = await tx.em.findOne(ServiceSchema, { id: serviceId });
    if (!service) return null;
    if (changes.webhookUrl != null) refuseInbox(service, 'inbox_has_no_webhook');
    if (changes.name !== undefined) service.name = changes.name;
    if (changes.webhookUrl !== undefined) service.webhookUrl = changes.webhookUrl;
    if (changes.standby !== undefined) service.standby = changes.standby;
    if (changes.webhookKinds !== undefined) service.webhookKinds = [...new Set(changes.webhookKinds)];
    if (changes.handoverNext !== undefined) service.handoverNextServiceId = await handoverNextId(tx.em, service, changes.handoverNext);
    if (changes.enabled === true) {
      service.disabledAt = null;
      service.disabledReason = null;
    } else if (changes.enabled === false) {
      if (!service.disabledAt) {
        service.disabledAt = new Date();
        service.disabledReason = 'operator';
        await tx.em.flush();
      }
      // Never silently: its conversations go to the next Service with the payloads delivered
      // (a Service its 410 switched off has handed them on already, see handOffDisabled).
      await handOffConversations(tx, service);
    }
    // A Service disabled (or enabled) by an operator is refused (or served) at once on every node.
    notify(tx, accountChanged(service.accountId));
    await recordNote(tx.em, audit, { accountId: service.accountId, target: { serviceId } });
    return service;
  });
}

async function handoverNextId(em: EntityManager, service: Service, identification: string | null): Promise<number | null> {
  if (identification === null) return null;
  const next = await em.findOne(ServiceSchema, { identification, accountId: service.accountId });
  if (!next) throw validationFailed([{ field: 'body.handoverNext', detail: 'the identification of a Service of the same account' }]);
  if (next.id === service.id) throw validationFailed([{ field: 'body.handoverNext', detail: 'another Service than this one' }]);
  return next.id;
}

export async function findService(em: EntityManager, serviceId: number): Promise<Service | null> {
  return em.findOne(ServiceSchema, { id: serviceId });
}

export async function listApiKeys(em: EntityManager, serviceId: number): Promise<ServiceApiKey[]> {
  return em.find(ServiceApiKeySchema, { serviceId }, { orderBy: { id: 'asc' } });
}

/**
 * Revoked at once: the next request with it is refused, on every node (the account notice
 * drops the keys nodes keep, api/service/caller.ts). Null when the Service has no such key.
 */
export async function revokeApiKey(em: EntityManager, serviceId: number, keyId: number, audit?: AuditNote): Promise<ServiceApiKey | null> {
  return transaction(em, async (tx) => {
    const key = await tx.em.findOne(ServiceApiKeySchema, { id: keyId, serviceId });
    const service = await tx.em.findOne(ServiceSchema, { id: serviceId });
    if (!key || !service) return null;
    key.revokedAt ??= new Date();
    notify(tx, accountChanged(service.accountId));
    await recordNote(tx.em, audit, {
      accountId: service.accountId,
      target: { serviceId, keyId },
      changed: ['revokedAt'],
    });
    return key;
  });
}

/**
 * A new signing secret. The old one keeps signing beside it for `graceSeconds`, so receivers
 * can switch secrets without refusing a single delivery (Standard Webhooks multi-signatures).
 */
export async function rotateSigningSecret(em: EntityManager, service: Service, graceSeconds: number): Promise<Service> {
  service.previousSigningSecret = service.signingSecret;
  service.previousSecretExpiresAt = new Date(Date.now() + graceSeconds * 1000);
  service.signingSecret = newSigningSecret();
  await em.flush();
  return service;
}

/** A Service a record names (a user's owner): it exists, the foreign key says so. */
export function getService(em: EntityManager, serviceId: number): Promise<Service> {
  return em.findOneOrFail(ServiceSchema, { id: serviceId });
}
