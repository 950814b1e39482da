import type { Account, Service } from '../db/entities/index.ts';
import { presentService } from './service.ts';

/** An account as operators see it; `authorizationSecret` is what their backend signs user headers with. */
export function presentAccount(account: Account) {
  return {
    id: account.id,
    identification: account.identification,
    name: account.name,
    authorizationSecret: account.authorizationSecret,
    defaultServiceId: account.defaultServiceId ?? null,
    welcomeMessage: account.welcomeMessage ?? null,
    stickyMessage: account.stickyMessage ?? null,
    allowedOrigins: account.settings.allowedOrigins ?? [],
    createdAt: account.createdAt.toISOString(),
  };
}

export function presentAccountOverview(account: Account, services: Service[]) {
  const defaultServiceId = account.defaultServiceId ?? null;
  const presented = services.map((s) => presentService(s, defaultServiceId));
  return {
    ...presentAccount(account),
    services: presented,
    defaultService: presented.find((s) => s.isDefault) ?? null,
  };
}
