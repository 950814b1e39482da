import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** An Admin API login; only the token's SHA-256 is stored, so a database dump grants nothing. */
export const OperatorSessionSchema = defineEntity({
  name: 'OperatorSession',
  tableName: 'operator_sessions',
  properties: (p) => ({
    id: p.integer().primary(),
    operatorId: p.integer(),
    tokenHash: p.string().unique(),
    createdAt: p.datetime().onCreate(() => new Date()),
    expiresAt: p.datetime(),
  }),
});

export type OperatorSession = InferEntity<typeof OperatorSessionSchema>;
