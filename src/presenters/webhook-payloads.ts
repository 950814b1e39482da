// The five payloads a Service receives, field for field as the spec's tables give them
// (docs/webhooks.md, "The five payloads"), quirks included:
// `user.id` is a numeric string in event and message payloads and a number in actions;
// client merging carries `additionalInformation` as JSON text and has no `type`;
// `requestUrl` is left out, not null, when unknown.
import type { Account, Message, Service, User } from '../db/entities/index.ts';

type AccountRef = Pick<Account, 'id' | 'identification'>;
type UserRef = Pick<User, 'id' | 'uniqueIdentifier' | 'additionalInformation'>;
type ServiceRef = Pick<Service, 'id' | 'name' | 'identification'>;

export type EventName = 'startTyping' | 'stopTyping' | 'chatOpened';

function embeddedUser<Id extends string | number>(user: UserRef, id: Id) {
  return {
    id,
    uniqueIdentifier: user.uniqueIdentifier ?? null,
    additionalInformation: user.additionalInformation ?? null,
  };
}

function requestUrl(url: string | null | undefined): { requestUrl?: string } {
  return url ? { requestUrl: url } : {};
}

export function eventPayload(name: EventName, account: AccountRef, user: UserRef) {
  return {
    type: 'event' as const,
    body: {
      name,
      body: { accountId: account.id, accountIdentification: account.identification },
      user: embeddedUser(user, String(user.id)),
    },
  };
}

type MessageRef = Pick<Message, 'id' | 'createdAt' | 'message' | 'media' | 'typeId' | 'requestUrl'>;

/** The public name of an upload, as clients and Services see it: <accountId>/<year>/<month>/<day>/<file>. */
export function mediaReference(accountId: number, path: string): string {
  return `${accountId}/${path}`;
}

/** `time` in Unix seconds, as the spec's ten-digit samples; an image is its `{{img/<path>}}` reference. */
export function messagePayload(message: MessageRef, account: AccountRef, user: UserRef) {
  return {
    type: 'message' as const,
    id: message.id,
    time: Math.floor(message.createdAt.getTime() / 1000),
    message: message.media ? `{{img/${mediaReference(account.id, message.media.path)}}}` : (message.message ?? ''),
    typeId: message.typeId,
    accountIdentification: account.identification,
    accountId: account.id,
    ...requestUrl(message.requestUrl),
    user: embeddedUser(user, String(user.id)),
  };
}

function owner(service: ServiceRef, defaultServiceId: number | null) {
  return { name: service.name, identification: service.identification, default: service.id === defaultServiceId };
}

/**
 * Who changed an owner: a Service (the specification's case), or an operator in the dashboard
 * (not in the specification). An operator is shown in the same shape, so a Service reading
 * `initiatedBy.identification` reads the operator's identifier (as changeDefaultService's
 * `initiatedBy` carries it); `name` is "operator" and `default` false.
 */
export type OwnerChangeInitiator = ServiceRef | { operator: string };

function initiator(by: OwnerChangeInitiator, defaultServiceId: number | null) {
  return 'operator' in by ? { name: 'operator', identification: by.operator, default: false } : owner(by, defaultServiceId);
}

export function changeOwnerPayload(input: {
  account: AccountRef & Pick<Account, 'defaultServiceId'>;
  user: UserRef;
  oldOwner: ServiceRef;
  newOwner: ServiceRef;
  initiatedBy: OwnerChangeInitiator;
  /** A handover step's step, reason and metadata, carried as JSON text; the spec's "" otherwise. */
  handover?: HandoverNote | null | undefined;
}) {
  const defaultId = input.account.defaultServiceId ?? null;
  return {
    type: 'owner' as const,
    accountIdentification: input.account.identification,
    user: embeddedUser(input.user, input.user.id),
    body: {
      action: 'changeOwner' as const,
      metadata: input.handover ? JSON.stringify(handoverNote(input.handover)) : '',
      oldOwner: owner(input.oldOwner, defaultId),
      newOwner: owner(input.newOwner, defaultId),
      initiatedBy: initiator(input.initiatedBy, defaultId),
    },
  };
}

/** The handover protocol's steps (docs/decisions/switchboard.md). */
export type HandoverStep = 'pass' | 'offer' | 'accept' | 'release';

/** Why a step was taken, as the Service said it: a reason and a JSON object, both optional. */
export interface HandoverNote {
  step: HandoverStep;
  reason: string | null;
  metadata: Record<string, unknown> | null;
}

function handoverNote(note: HandoverNote) {
  return { step: note.step, reason: note.reason, metadata: note.metadata };
}

/**
 * A handover event (not in the specification): `offerControl` to the offering and the offered
 * Service, `offerExpired` to both when that offer timed out unaccepted (the offer's fields), or
 * `failure` to a Service whose step was refused, with the step and the code it was answered.
 */
export function handoverPayload(input: {
  account: AccountRef & Pick<Account, 'defaultServiceId'>;
  user: UserRef;
  initiatedBy: ServiceRef;
  note: HandoverNote;
  offer?: { from: ServiceRef; to: ServiceRef; expiresAt: Date } | undefined;
  failure?: { code: string } | undefined;
  /** The offer timed out: `offerExpired`. */
  expired?: boolean | undefined;
}) {
  const defaultId = input.account.defaultServiceId ?? null;
  return {
    type: 'handover' as const,
    accountIdentification: input.account.identification,
    user: embeddedUser(input.user, input.user.id),
    body: {
      action: input.failure ? ('failure' as const) : input.expired ? ('offerExpired' as const) : ('offerControl' as const),
      ...handoverNote(input.note),
      ...(input.failure ? { code: input.failure.code } : {}),
      ...(input.offer
        ? { from: owner(input.offer.from, defaultId), to: owner(input.offer.to, defaultId), expiresAt: input.offer.expiresAt.toISOString() }
        : {}),
      initiatedBy: owner(input.initiatedBy, defaultId),
    },
  };
}

export function changeDefaultServicePayload(input: {
  account: AccountRef;
  oldDefault: ServiceRef;
  newDefault: ServiceRef;
  /** The operator's identifier. */
  initiatedBy: string;
}) {
  return {
    type: 'service' as const,
    accountIdentification: input.account.identification,
    body: {
      action: 'changeDefaultService' as const,
      metadata: '',
      initiatedBy: input.initiatedBy,
      oldDefaultService: { name: input.oldDefault.name, identification: input.oldDefault.identification },
      newDefaultService: { name: input.newDefault.name, identification: input.newDefault.identification },
    },
  };
}

export function clientMergingPayload(input: {
  account: AccountRef;
  oldUserId: number;
  newUser: UserRef;
  requestUrl: string | null | undefined;
}) {
  const info = input.newUser.additionalInformation;
  return {
    updateUser: {
      oldUserId: input.oldUserId,
      newUserId: input.newUser.id,
      uniqueIdentifier: input.newUser.uniqueIdentifier ?? null,
      additionalInformation: info == null ? null : JSON.stringify(info),
    },
    accountId: input.account.id,
    ...requestUrl(input.requestUrl),
  };
}
