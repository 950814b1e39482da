import type { Account, Service } from '../db/entities/index.ts';
import { chatSettingsOf } from '../tenancy/chat-settings.ts';
import { presentService } from './service.ts';

/**
 * An account as operators see it. Its authorization secret (what the customer's backend signs
 * user headers with: whoever holds it can sign in as any customer) is not part of it: it is
 * shown once, when the account is made or the secret rotated (presentAuthorizationSecret).
 */
export function presentAccount(account: Account) {
  return {
    id: account.id,
    identification: account.identification,
    name: account.name,
    defaultServiceId: account.defaultServiceId ?? null,
    welcomeMessage: account.welcomeMessage ?? null,
    stickyMessage: account.stickyMessage ?? null,
    allowedOrigins: account.settings.allowedOrigins ?? [],
    requireTwoFactor: account.requireTwoFactor,
    ...chatSettingsOf(account),
    createdAt: account.createdAt.toISOString(),
  };
}

/** `services` are the webhook Services; the team inbox is `inbox` (it may be the default Service too). */
export function presentAccountOverview(account: Account, services: Service[], inbox: Service | null) {
  const defaultServiceId = account.defaultServiceId ?? null;
  const presented = services.map((s) => presentService(s, defaultServiceId));
  const presentedInbox = inbox ? presentService(inbox, defaultServiceId) : null;
  return {
    ...presentAccount(account),
    services: presented,
    inbox: presentedInbox,
    defaultService: [...presented, ...(presentedInbox ? [presentedInbox] : [])].find((s) => s.isDefault) ?? null,
  };
}

/** The answer that makes an account: the account and, this once, its authorization secret. */
export function presentCreatedAccount(account: Account) {
  return { ...presentAccount(account), authorizationSecret: account.authorizationSecret };
}

/** A rotated secret, shown this once, and until when the one before still verifies headers. */
export function presentAuthorizationSecret(account: Account) {
  return {
    authorizationSecret: account.authorizationSecret,
    previousSecretExpiresAt: account.previousAuthorizationSecretExpiresAt?.toISOString() ?? null,
  };
}
