// Fresh tenants for tests, made through the Admin API as an operator would make them.
import { expect } from 'chai';
import { client, type Client } from './http.ts';
import { TEST_ADMIN, sharedServer } from './server.ts';

export interface AccountData {
  id: number;
  identification: string;
  name: string;
  authorizationSecret: string;
  defaultServiceId: number | null;
}

export interface CreatedServiceData {
  id: number;
  accountId: number;
  identification: string;
  name: string;
  webhookUrl: string | null;
  isDefault: boolean;
  signingSecret: string;
  apiKey: string;
}

const tokens = new Map<string, string>();

/** A bearer token of the configured test operator (every permission). */
export async function adminToken(baseUrl = sharedServer().url): Promise<string> {
  const cached = tokens.get(baseUrl);
  if (cached) return cached;
  const answer = await client(baseUrl).post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN });
  expect(answer.status, answer.text).to.equal(200);
  tokens.set(baseUrl, answer.body.data.token);
  return answer.body.data.token;
}

let counter = 0;

export async function createAccount(api: Client = client(sharedServer().url)): Promise<AccountData> {
  counter += 1;
  const answer = await api.post<AccountData>('/adminApi/accounts', {
    token: await adminToken(),
    json: { name: `Test account ${counter}` },
  });
  expect(answer.status, answer.text).to.equal(201);
  return answer.body.data;
}

export async function createService(
  accountId: number,
  fields: { name?: string; webhookUrl?: string | null } = {},
  api: Client = client(sharedServer().url),
): Promise<CreatedServiceData> {
  const answer = await api.post<CreatedServiceData>(`/adminApi/accounts/${accountId}/services`, {
    token: await adminToken(),
    json: { name: fields.name ?? 'Test service', webhookUrl: fields.webhookUrl ?? null },
  });
  expect(answer.status, answer.text).to.equal(201);
  return answer.body.data;
}

/**
 * An account on the server at baseUrl, with a Service 'Desk' that takes no webhooks, or takes
 * them at the address `webhookUrl` gives for the account made.
 */
export async function accountWithDesk(
  baseUrl: string,
  name: string,
  webhookUrl: (account: AccountData) => string | null = () => null,
): Promise<{ account: AccountData; service: CreatedServiceData }> {
  const api = client(baseUrl);
  const token = await adminToken(baseUrl);
  const made = await api.post<AccountData>('/adminApi/accounts', { token, json: { name } });
  expect(made.status, made.text).to.equal(201);
  const account = made.body.data;
  const service = await api.post<CreatedServiceData>(`/adminApi/accounts/${account.id}/services`, {
    token,
    json: { name: 'Desk', webhookUrl: webhookUrl(account) },
  });
  expect(service.status, service.text).to.equal(201);
  return { account, service: service.body.data };
}
