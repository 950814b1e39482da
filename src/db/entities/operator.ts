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
  }),
});

export type Operator = InferEntity<typeof OperatorSchema>;
