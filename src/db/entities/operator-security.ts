import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** A one-time recovery code of an operator's two-factor sign-in; only its SHA-256 is stored. */
export const OperatorRecoveryCodeSchema = defineEntity({
  name: 'OperatorRecoveryCode',
  tableName: 'operator_recovery_codes',
  properties: (p) => ({
    id: p.integer().primary(),
    operatorId: p.integer(),
    codeHash: p.string(),
    usedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});

export type OperatorRecoveryCode = InferEntity<typeof OperatorRecoveryCodeSchema>;

/** A password-reset link: single use, expiring, only its token's SHA-256 stored. */
export const OperatorPasswordResetSchema = defineEntity({
  name: 'OperatorPasswordReset',
  tableName: 'operator_password_resets',
  properties: (p) => ({
    id: p.integer().primary(),
    operatorId: p.integer(),
    tokenHash: p.string().unique(),
    createdAt: p.datetime().onCreate(() => new Date()),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  }),
});

export type OperatorPasswordReset = InferEntity<typeof OperatorPasswordResetSchema>;

/**
 * A sign-in whose password was right, waiting for its two-factor code. It grants nothing by
 * itself: only POST /adminApi/login/two-factor turns it, with a code, into a session.
 */
export const OperatorLoginChallengeSchema = defineEntity({
  name: 'OperatorLoginChallenge',
  tableName: 'operator_login_challenges',
  properties: (p) => ({
    id: p.integer().primary(),
    operatorId: p.integer(),
    tokenHash: p.string().unique(),
    createdAt: p.datetime().onCreate(() => new Date()),
    expiresAt: p.datetime(),
    address: p.string().nullable(),
    userAgent: p.string().nullable(),
  }),
});

export type OperatorLoginChallenge = InferEntity<typeof OperatorLoginChallengeSchema>;
