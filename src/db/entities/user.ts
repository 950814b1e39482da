import { defineEntity, type InferEntity } from '@mikro-orm/core';

export type UserKind = 'anonymous' | 'registered';

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
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});

export type User = InferEntity<typeof UserSchema>;
