// A caller snapshot: the conversation as a caller opened it, that is the account, the device it is on and the device's user,
// read once per call (snapshots, never managed entities: changes go through the commands,
// which lock and read what they change themselves).
import type { Account, Device, User } from '../db/entities/index.ts';

export interface CallerSnapshot {
  readonly account: Readonly<Account>;
  readonly device: Readonly<Device>;
  readonly user: Readonly<User>;
}

/**
 * What a client's message and events need of their caller (the Event and message payloads,
 * the owner an event goes to): all a socket keeps between its events. A whole snapshot, kept
 * by every busy socket, would hold its own copy of the account (secrets, settings) and of
 * every column of the device and the user, six Dates among them.
 */
export interface ConversationKeys {
  readonly account: Readonly<Pick<Account, 'id' | 'identification'>>;
  readonly device: Readonly<Pick<Device, 'id'>>;
  readonly user: Readonly<Pick<User, 'id' | 'ownerServiceId' | 'uniqueIdentifier' | 'additionalInformation'>>;
}

/** The keys of a snapshot, as new objects, so that keeping them keeps nothing else of it. */
export function conversationKeys({ account, device, user }: CallerSnapshot): ConversationKeys {
  return {
    account: { id: account.id, identification: account.identification },
    device: { id: device.id },
    user: {
      id: user.id,
      ownerServiceId: user.ownerServiceId,
      uniqueIdentifier: user.uniqueIdentifier,
      additionalInformation: user.additionalInformation,
    },
  };
}
