// Password-reset links: made by an operator who manages operators, or by the CLI, and shown
// once to whoever made them (Palaver sends no email). Single use, expiring, stored hashed.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { OperatorLoginChallengeSchema, OperatorPasswordResetSchema, OperatorSchema } from '../db/entities/index.ts';
import { hashPassword } from '../security/passwords.ts';
import { newToken, sha256Hex } from '../security/random.ts';
import { endSessions, signInContext, type SignInOrigin } from './operators.ts';
import { recordAudit } from '../audit/entries.ts';
import type { AuditRequest } from '../audit/context.ts';

/**
 * The dashboard page that sets a new password with the token. The token travels in the
 * fragment, which browsers send to no server (no access log, no Referer).
 */
export function passwordResetUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/dashboard#/reset-password/${token}`;
}

/**
 * A new reset token for the operator (earlier unused ones stop working); null when there is
 * no such operator.
 */
export async function createPasswordReset(
  em: EntityManager,
  operatorId: number,
  ttlSeconds: number,
  audit: AuditRequest,
): Promise<{ token: string; expiresAt: Date } | null> {
  return em.transactional(async (tx) => {
    const operator = await tx.findOne(OperatorSchema, { id: operatorId });
    if (!operator) return null;
    await tx.nativeDelete(OperatorPasswordResetSchema, { operatorId, usedAt: null });
    const token = newToken('prt');
    const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
    tx.create(OperatorPasswordResetSchema, { operatorId, tokenHash: sha256Hex(token), expiresAt });
    await recordAudit(tx, audit.context, { action: audit.action, target: { operatorId } });
    return { token, expiresAt };
  });
}

/**
 * Sets the password a reset token is for, and uses the token up; every session of the operator
 * ends, and sign-ins waiting for a second step with it. Two-factor sign-in stays as it was.
 * False for an unknown, expired or used token.
 */
export async function resetPassword(
  em: EntityManager,
  input: { token: string; password: string; hashCost: number; origin: SignInOrigin },
): Promise<boolean> {
  const passwordHash = await hashPassword(input.password, input.hashCost);
  return em.transactional(async (tx) => {
    // Locked, and the conditions checked again after the lock: two requests with one token cannot both succeed.
    const reset = await tx.findOne(
      OperatorPasswordResetSchema,
      { tokenHash: sha256Hex(input.token), usedAt: null, expiresAt: { $gt: new Date() } },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!reset) {
      await recordAudit(tx, signInContext(input.origin, null, ''), { action: 'password_reset.use', outcome: 'failure' });
      return false;
    }
    reset.usedAt = new Date();
    const operatorId = reset.operatorId;
    const operator = await tx.findOneOrFail(OperatorSchema, { id: operatorId });
    await recordAudit(tx, signInContext(input.origin, operator, ''), {
      action: 'password_reset.use',
      target: { operatorId },
      changed: ['password'],
    });
    await tx.nativeUpdate(OperatorSchema, { id: operatorId }, { passwordHash });
    await endSessions(tx, operatorId);
    await tx.nativeDelete(OperatorLoginChallengeSchema, { operatorId });
    return true;
  });
}
