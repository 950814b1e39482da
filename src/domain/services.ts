// Services: the backends attached to an account. Creating one issues its first API key;
// the first Service of an account becomes the account's default.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, ServiceApiKeySchema, ServiceSchema, type Service } from '../db/entities/index.ts';
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
): Promise<CreatedService | null> {
  return em.transactional(async (tx) => {
    // The row lock makes "first Service becomes default" hold when two are created at once.
    const account = await tx.findOne(AccountSchema, { id: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!account) return null;
    const service = tx.create(ServiceSchema, {
      accountId,
      name: input.name,
      identification: alphanumericId(16),
      webhookUrl: input.webhookUrl ?? null,
      signingSecret: newSigningSecret(),
    });
    await tx.flush();
    const apiKey = issueApiKey(tx, service.id);
    const isDefault = account.defaultServiceId == null;
    if (isDefault) account.defaultServiceId = service.id;
    await tx.flush();
    return { service, apiKey, isDefault };
  });
}

/** Adds an API key to the Service (flushed by the caller) and returns the only plain copy. */
export function issueApiKey(em: EntityManager, serviceId: number): string {
  const apiKey = newToken('pk');
  em.create(ServiceApiKeySchema, { serviceId, keyHash: sha256Hex(apiKey), prefix: apiKey.slice(0, 10) });
  return apiKey;
}

export interface ServiceChanges {
  name?: string | undefined;
  webhookUrl?: string | null | undefined;
  enabled?: boolean | undefined;
}

/** Returns null when the Service does not exist. */
export async function updateService(em: EntityManager, serviceId: number, changes: ServiceChanges): Promise<Service | null> {
  const service = await em.findOne(ServiceSchema, { id: serviceId });
  if (!service) return null;
  if (changes.name !== undefined) service.name = changes.name;
  if (changes.webhookUrl !== undefined) service.webhookUrl = changes.webhookUrl;
  if (changes.enabled === true) {
    service.disabledAt = null;
    service.disabledReason = null;
  } else if (changes.enabled === false && !service.disabledAt) {
    service.disabledAt = new Date();
    service.disabledReason = 'operator';
  }
  await em.flush();
  return service;
}

export async function findService(em: EntityManager, serviceId: number): Promise<Service | null> {
  return em.findOne(ServiceSchema, { id: serviceId });
}
