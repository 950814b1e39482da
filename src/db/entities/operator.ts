import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** A dashboard user. `identifier` is what `initiatedBy` carries in action payloads. */
export const OperatorSchema = defineEntity({
  name: 'Operator',
  tableName: 'operators',
  properties: (p) => ({
    id: p.integer().primary(),
    email: p.string().unique(),
    identifier: p.string().unique(),
    passwordHash: p.string(),
    createdAt: p.datetime().onCreate(() => new Date()),
    /** Set: cannot sign in, tokens refused (the grants are kept for when enabled again). */
    disabledAt: p.datetime().nullable(),
    /** What customers see as the agent's name when the operator answers; null: the part of the email before @. */
    displayName: p.string().nullable(),
    /** An https URL, shown as the agent's avatar. */
    avatarUrl: p.text().nullable(),
  }),
});

export type Operator = InferEntity<typeof OperatorSchema>;
