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
    /** Updated at most once a minute, by the requests the token authenticates. */
    lastUsedAt: p.datetime().nullable(),
    /** The client address and User-Agent of the sign-in, for the operator to recognise it. */
    address: p.string().nullable(),
    userAgent: p.string().nullable(),
  }),
});

export type OperatorSession = InferEntity<typeof OperatorSessionSchema>;
