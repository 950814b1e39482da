import { defineEntity, type InferEntity } from '@mikro-orm/core';

export type UserKind = 'anonymous' | 'registered';
export type ContactSource = 'client' | 'service';

/** The agent currently handling a conversation, as clients see it. */
export interface AgentSnapshot {
  id: number;
  name: string;
  avatar: string | null;
}

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: (p) => ({
    id: p.integer().primary(),
    accountId: p.integer(),
    kind: p.string().$type<UserKind>(),
    uniqueIdentifier: p.string().nullable(),
    additionalInformation: p.json<Record<string, unknown>>().nullable(),
    ownerServiceId: p.integer(),
    currentAgent: p.json<AgentSnapshot>().nullable(),
    agentTyping: p.json<AgentSnapshot>().nullable(),
    agentTypingUntil: p.datetime().nullable(),
    mergedIntoUserId: p.integer().nullable(),
    /** Contact details (docs/service-api.md): set by the customer (Client API) or their backend (Service API). */
    email: p.text().nullable(),
    contactName: p.text().nullable(),
    /** `en` or `nl`: the language of the emails sent to them. */
    contactLanguage: p.text().nullable(),
    /** Who set the contact details last: a Service's are not overwritten by the customer. */
    contactSource: p.text().$type<ContactSource>().nullable(),
    contactUpdatedAt: p.datetime().nullable(),
    /** Set by the unsubscribe link: no answers by email any more. */
    emailUnsubscribedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});

export type User = InferEntity<typeof UserSchema>;
