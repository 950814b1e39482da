// POST /devices: the user state table of the spec ("States and transitions"), one transaction
// per call, serialised per device by an advisory lock so that concurrent registrations of one
// device make one user and one device, and two merges of one device make one merge.
import type { Transaction } from '../db/tx/transaction.ts';
import { transaction } from '../db/tx/run.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { DeviceSchema, MessageType, UserSchema, type Account, type Device, type DeviceType, type User } from '../db/entities/index.ts';
import { AppError } from '../errors.ts';
import { deviceLock, lockName } from './locks.ts';
import { mergeAnonymousInto } from './merge.ts';
import { notify } from './notices.ts';
import { recordUserMessage } from './messages.ts';
import { createAnonymousUser, createRegisteredUser, findRegisteredUser } from './users.ts';

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
  /** The customer the caller's authorization names; undefined for an anonymous caller. */
  identity: { identification: string } | undefined;
  fields: DeviceFields;
  /** Replaces the user's additional information when given. */
  userAdditionalInformation: Record<string, unknown> | undefined;
  requestUrl: string | null;
}

export type Transition = 'created_anonymous' | 'created_registered' | 'merged' | 'moved_to_other_customer' | 'unchanged';

export interface RegistrationResult {
  user: User;
  device: Device;
  transition: Transition;
}

export async function registerDevice(em: EntityManager, input: DeviceRegistration): Promise<RegistrationResult> {
  return transaction(em, async (tx) => {
    await lockName(tx.em, deviceLock(input.account.id, input.deviceId));
    const device = await tx.em.findOne(DeviceSchema, { accountId: input.account.id, uniqueAppDeviceId: input.deviceId });
    const result = device ? await existingDevice(tx, input, device) : await newDevice(tx, input);
    applyFields(result.device, input.fields);
    if (input.userAdditionalInformation !== undefined) {
      result.user.additionalInformation = input.userAdditionalInformation;
    }
    await tx.em.flush();
    return result;
  });
}

async function newDevice(tx: Transaction, input: DeviceRegistration): Promise<RegistrationResult> {
  const { em } = tx;
  const { account, identity } = input;
  let user: User;
  let transition: Transition;
  if (identity) {
    user = await registeredUser(tx, input);
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

async function existingDevice(tx: Transaction, input: DeviceRegistration, device: Device): Promise<RegistrationResult> {
  const { em } = tx;
  const current = await em.findOneOrFail(UserSchema, { id: device.userId });
  const { identity } = input;

  if (current.kind === 'anonymous') {
    if (!identity) return { user: current, device, transition: 'unchanged' };
    // Anonymous → Registered: the conversation moves into the registered user's. The
    // registered user is made, if new, only once the merge holds its locks (merge.ts), from
    // the anonymous user as it stands then.
    const registered = await mergeAnonymousInto(tx, {
      account: input.account,
      anonymous: current,
      registered: await findRegisteredUser(em, input.account, identity.identification),
      createRegistered: (from) => newRegisteredUser(tx, input, from),
      requestUrl: input.requestUrl,
    });
    if (!registered && current.mergedIntoUserId != null) {
      // Merged already (not reachable while every merge takes the device lock; never merge
      // twice): the device answers as the conversation's device, like one moved by that merge.
      device.userId = current.mergedIntoUserId;
      return existingDevice(tx, input, device);
    }
    if (!registered) throw new Error('merge made no registered user');
    device.userId = registered.id;
    // The anonymous user's sockets move to the registered conversation once this commits.
    notify(tx, { kind: 'merged', fromUserId: current.id, toUserId: registered.id });
    return { user: registered, device, transition: 'merged' };
  }

  // Registered → anonymous on the same device is not supported (spec, Errors).
  if (!identity) throw new AppError(403, 'device_not_registered');
  if (identity.identification === current.uniqueIdentifier) return { user: current, device, transition: 'unchanged' };
  // Another customer signed in on this device: it becomes theirs, and never shows the
  // previous customer's conversation, which stays with that customer.
  const other = await registeredUser(tx, input);
  device.userId = other.id;
  // Its sockets were opened as the previous customer: their next event is identified afresh.
  notify(tx, { kind: 'deviceMoved', userId: current.id, deviceId: device.id });
  return { user: other, device, transition: 'moved_to_other_customer' };
}

/** The registered user of the identity, found under the customer lock, or created (newRegisteredUser). */
async function registeredUser(tx: Transaction, input: DeviceRegistration): Promise<User> {
  const identity = input.identity;
  if (!identity) throw new Error('registeredUser needs an identity');
  return (await findRegisteredUser(tx.em, input.account, identity.identification)) ?? newRegisteredUser(tx, input, null);
}

/**
 * A registered user seen for the first time (the caller holds the customer lock, see
 * findRegisteredUser), with a `user_registered` system message to its owner. A user created by
 * a merge continues the anonymous conversation: same owner Service, same current agent, its
 * information unless new information is given.
 */
async function newRegisteredUser(tx: Transaction, input: DeviceRegistration, from: User | null): Promise<User> {
  const identity = input.identity;
  if (!identity) throw new Error('newRegisteredUser needs an identity');
  const user = await createRegisteredUser(
    tx.em,
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
  await recordUserMessage(tx, input.account, user, {
    typeId: MessageType.userSystem,
    text: 'user_registered',
    media: null,
    deviceId: null,
    requestUrl: input.requestUrl,
  });
  return user;
}

function applyFields(device: Device, fields: DeviceFields): void {
  if (fields.type !== undefined) device.type = fields.type;
  if (fields.version !== undefined) device.version = fields.version;
  if (fields.pushToken !== undefined) device.pushToken = fields.pushToken;
  if (fields.pushType !== undefined) device.pushType = fields.pushType;
  device.pushEnabled = pushEnabled(device, fields);
  if (fields.referer !== undefined) device.referer = fields.referer;
}

/**
 * Said outright (iOS always sends `pushEnabled`), it is what the app says. Unsaid, a device that
 * registers a push token wants pushes: the Parley Android library's Device has no `pushEnabled`
 * at all, and sends only its token (`pushToken`, `pushType`). Without either, it stays as it was.
 */
function pushEnabled(device: Device, fields: DeviceFields): boolean {
  if (fields.pushEnabled !== undefined) return fields.pushEnabled;
  if (typeof fields.pushToken === 'string' && fields.pushToken !== '') return true;
  return device.pushEnabled;
}
