import type { Service, User } from '../db/entities/index.ts';
import { presentCurrentAgent } from './client-message.ts';
import { presentContact } from './contact.ts';

/** A user as the Service API shows it. */
export function presentServiceUser(user: User, owner: Service, defaultServiceId: number | null) {
  return {
    id: user.id,
    kind: user.kind,
    uniqueIdentifier: user.uniqueIdentifier ?? null,
    additionalInformation: user.additionalInformation ?? null,
    owner: { name: owner.name, identification: owner.identification, default: owner.id === defaultServiceId },
    agent: presentCurrentAgent(user),
    contact: presentContact(user),
    createdAt: user.createdAt.toISOString(),
  };
}

/** A user in a list (the dashboard's), without loading each owner. */
export function presentUserSummary(user: User) {
  return {
    id: user.id,
    kind: user.kind,
    uniqueIdentifier: user.uniqueIdentifier ?? null,
    additionalInformation: user.additionalInformation ?? null,
    ownerServiceId: user.ownerServiceId,
    agent: presentCurrentAgent(user),
    contact: presentContact(user),
    createdAt: user.createdAt.toISOString(),
  };
}
