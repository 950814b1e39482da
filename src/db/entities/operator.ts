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
    /** The TOTP secret (base32) of an enrolled authenticator; set with totpEnabledAt. */
    totpSecret: p.string().nullable(),
    totpEnabledAt: p.datetime().nullable(),
    /** A secret shown for enrolment, not yet confirmed with a code. */
    totpPendingSecret: p.string().nullable(),
    /** The time step of the last code accepted: a code is good once (RFC 6238 section 5.2). */
    totpLastStep: p.integer().nullable(),
  }),
});

export type Operator = InferEntity<typeof OperatorSchema>;
