// Accounts: the tenants. Each has a public identification that clients send and a secret
// with which the customer's backend signs registered-user headers.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, ServiceSchema, type Account, type Service } from '../db/entities/index.ts';
import { alphanumericId, newAuthorizationSecret } from '../security/random.ts';

export interface NewAccount {
  name: string;
}

export async function createAccount(em: EntityManager, input: NewAccount): Promise<Account> {
  const account = em.create(AccountSchema, {
    identification: alphanumericId(16),
    name: input.name,
    authorizationSecret: newAuthorizationSecret(),
    settings: {},
  });
  await em.flush();
  return account;
}

export interface AccountOverview {
  account: Account;
  services: Service[];
}

export async function findAccountOverview(em: EntityManager, accountId: number): Promise<AccountOverview | null> {
  const account = await em.findOne(AccountSchema, { id: accountId });
  if (!account) return null;
  const services = await em.find(ServiceSchema, { accountId }, { orderBy: { id: 'asc' } });
  return { account, services };
}
