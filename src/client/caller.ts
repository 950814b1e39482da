// Who is calling the Client API: the account (from the identification header), the device
// id, and the registered identity when an authorization header is given.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, DeviceSchema, UserSchema, type Account, type Device, type User } from '../db/entities/index.ts';
import { AppError, notFound } from '../http/errors.ts';
import { verifyAuthorization, type RegisteredIdentity } from './authorization.ts';
import { parseIdentification } from './identification.ts';

export interface ClientCaller {
  account: Account;
  deviceId: string;
  identity: RegisteredIdentity | undefined;
}

export interface Conversation {
  account: Account;
  device: Device;
  user: User;
}

export interface CallerHeaders {
  identification: string | undefined;
  authorization: string | undefined;
}

export async function identifyCaller(em: EntityManager, headers: CallerHeaders): Promise<ClientCaller> {
  const { accountIdentification, deviceId } = parseIdentification(headers.identification);
  const account = await em.findOne(AccountSchema, { identification: accountIdentification });
  if (!account) throw notFound('account_not_found');
  const identity = verifyAuthorization(headers.authorization, account);
  return { account, deviceId, identity };
}

/**
 * The caller's conversation, for every call but POST /devices. A registered user's device
 * must present that user's authorization: a device id alone never opens a customer's history.
 */
export async function openConversation(em: EntityManager, caller: ClientCaller): Promise<Conversation> {
  const device = await em.findOne(DeviceSchema, { accountId: caller.account.id, uniqueAppDeviceId: caller.deviceId });
  if (!device) throw notFound('device_not_found');
  const user = await em.findOneOrFail(UserSchema, { id: device.userId });
  if (user.kind === 'registered') {
    if (!caller.identity) throw new AppError(401, 'authorization_required');
    if (caller.identity.identification !== user.uniqueIdentifier) throw new AppError(403, 'authorization_mismatch');
  }
  return { account: caller.account, device, user };
}
