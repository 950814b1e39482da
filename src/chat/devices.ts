// POST /devices: the user state table of the spec ("States and transitions"), one transaction
// per call, serialised per device by an advisory lock so that concurrent registrations of one
// device make one user and one device, and two merges of one device make one merge.
import type { EntityManager } from '@mikro-orm/postgresql';
import { DeviceSchema, UserSchema, type Account, type Device, type DeviceType, type User } from '../db/entities/index.ts';
import type { RegisteredIdentity } from '../client/authorization.ts';
import { AppError } from '../http/errors.ts';
import { deviceLock, lockName } from './locks.ts';
import { mergeAnonymousInto } from './merge.ts';
import { recordUserMessage } from './messages.ts';
import { createAnonymousUser, findOrCreateRegisteredUser } from './users.ts';

export interface DeviceFields {
  type?: DeviceType | undefined;
  version?: string | undefined;
  pushToken?: string | null | undefined;
  pushType?: number | null | undefined;
  pushEnabled?: boolean | undefined;
  referer?: string | null | undefined;
}

export interface DeviceRegistration {
  account: Account;
  deviceId: string;
  identity: RegisteredIdentity | undefined;
  fields: DeviceFields;
  /** Replaces the user's additional information when given. */
  userAdditionalInformation: Record<string, unknown> | undefined;
  requestUrl: string | null;
}

export type Transition =
  | 'created_anonymous'
  | 'created_registered'
  | 'merged'
  | 'moved_to_other_customer'
  | 'unchanged';

export interface RegistrationResult {
  user: User;
  device: Device;
  transition: Transition;
  /** The anonymous user merged into `user`, when transition is 'merged'. */
  mergedFrom?: number;
}

export async function registerDevice(em: EntityManager, input: DeviceRegistration): Promise<RegistrationResult> {
  return em.transactional(async (tx) => {
    await lockName(tx, deviceLock(input.account.id, input.deviceId));
    const device = await tx.findOne(DeviceSchema, { accountId: input.account.id, uniqueAppDeviceId: input.deviceId });
    const result = device ? await existingDevice(tx, input, device) : await newDevice(tx, input);
    applyFields(result.device, input.fields);
    if (input.userAdditionalInformation !== undefined) {
      result.user.additionalInformation = input.userAdditionalInformation;
    }
    await tx.flush();
    return result;
  });
}

async function newDevice(em: EntityManager, input: DeviceRegistration): Promise<RegistrationResult> {
  const { account, identity } = input;
  let user: User;
  let transition: Transition;
  if (identity) {
    user = await registeredUser(em, input, null);
    transition = 'created_registered';
  } else {
    user = createAnonymousUser(em, account, input.userAdditionalInformation ?? null);
    await em.flush();
    transition = 'created_anonymous';
  }
  const device = em.create(DeviceSchema, {
    accountId: account.id,
    uniqueAppDeviceId: input.deviceId,
    userId: user.id,
    type: input.fields.type ?? 3,
    version: null,
    pushToken: null,
    pushType: null,
    pushEnabled: false,
    referer: null,
  });
  return { user, device, transition };
}

async function existingDevice(em: EntityManager, input: DeviceRegistration, device: Device): Promise<RegistrationResult> {
  const current = await em.findOneOrFail(UserSchema, { id: device.userId });
  const { identity } = input;

  if (current.kind === 'anonymous') {
    if (!identity) return { user: current, device, transition: 'unchanged' };
    // Anonymous → Registered: the conversation moves into the registered user's.
    const registered = await registeredUser(em, input, current);
    await mergeAnonymousInto(em, input.account, current, registered, input.requestUrl);
    device.userId = registered.id;
    return { user: registered, device, transition: 'merged', mergedFrom: current.id };
  }

  // Registered → anonymous on the same device is not supported (spec, Errors).
  if (!identity) throw new AppError(403, 'device_not_registered');
  if (identity.identification === current.uniqueIdentifier) return { user: current, device, transition: 'unchanged' };
  // Another customer signed in on this device: it becomes theirs, and never shows the
  // previous customer's conversation, which stays with that customer.
  const other = await registeredUser(em, input, null);
  device.userId = other.id;
  return { user: other, device, transition: 'moved_to_other_customer' };
}

/**
 * The registered user of the identity, created on first sight with a `user_registered` system
 * message to its owner. A user created by a merge continues the anonymous conversation: same
 * owner Service, same current agent, its information unless new information is given.
 */
async function registeredUser(em: EntityManager, input: DeviceRegistration, from: User | null): Promise<User> {
  const identity = input.identity;
  if (!identity) throw new Error('registeredUser needs an identity');
  const { user, created } = await findOrCreateRegisteredUser(
    em,
    input.account,
    identity.identification,
    from
      ? {
          ownerServiceId: from.ownerServiceId,
          currentAgent: from.currentAgent ?? null,
          additionalInformation: input.userAdditionalInformation ?? from.additionalInformation ?? null,
        }
      : { additionalInformation: input.userAdditionalInformation ?? null },
  );
  if (created) {
    await recordUserMessage(em, input.account, user, {
      typeId: 4,
      text: 'user_registered',
      media: null,
      deviceId: null,
      requestUrl: input.requestUrl,
    });
  }
  return user;
}

function applyFields(device: Device, fields: DeviceFields): void {
  if (fields.type !== undefined) device.type = fields.type;
  if (fields.version !== undefined) device.version = fields.version;
  if (fields.pushToken !== undefined) device.pushToken = fields.pushToken;
  if (fields.pushType !== undefined) device.pushType = fields.pushType;
  if (fields.pushEnabled !== undefined) device.pushEnabled = fields.pushEnabled;
  if (fields.referer !== undefined) device.referer = fields.referer;
}
