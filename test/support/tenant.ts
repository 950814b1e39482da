// A fresh account with one Service whose webhook is a loopback receiver: what most Client API
// tests start from.
import { createAccount, createService, type AccountData, type CreatedServiceData } from './factories.ts';
import { Receiver } from './receiver.ts';

export interface Tenant {
  account: AccountData;
  service: CreatedServiceData;
  receiver: Receiver;
}

export async function tenant(): Promise<Tenant> {
  const receiver = await Receiver.start();
  const account = await createAccount();
  const service = await createService(account.id, { name: 'Owner', webhookUrl: `${receiver.url}/hook` });
  return { account: { ...account, defaultServiceId: service.id }, service, receiver };
}
