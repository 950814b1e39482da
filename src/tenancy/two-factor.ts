// Two-factor sign-in with TOTP (RFC 6238: 6 digits, 30 s, SHA-1, what every authenticator app
// reads from an otpauth:// QR code) and one-time recovery codes. Codes come from `otpauth`.
import { randomInt } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Secret, TOTP } from 'otpauth';
import { OperatorLoginChallengeSchema, OperatorRecoveryCodeSchema, OperatorSchema, type Operator } from '../db/entities/index.ts';
import { sha256Hex } from '../security/random.ts';
import { endSessions, signInContext, startSession, type SignInOrigin } from './operators.ts';
import { recordAudit } from '../audit/entries.ts';

const PERIOD = 30;
export const RECOVERY_CODE_COUNT = 10;

function totp(operator: Pick<Operator, 'email'>, secret: string): TOTP {
  return new TOTP({
    issuer: 'Palaver',
    label: operator.email,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD,
    secret: Secret.fromBase32(secret),
  });
}

/**
 * The time step of a right code (one step of clock drift either way), or null. A step at or
 * before the last one accepted is refused: a code seen over a shoulder or in a log is good once.
 */
function acceptedStep(operator: Operator, secret: string, code: string): number | null {
  const delta = totp(operator, secret).validate({ token: code, window: 1 });
  if (delta === null) return null;
  const step = Math.floor(Date.now() / 1000 / PERIOD) + delta;
  if (operator.totpLastStep != null && step <= operator.totpLastStep) return null;
  return step;
}

/** 16 characters of a 32-letter alphabet (80 bits), in groups of four: xxxx-xxxx-xxxx-xxxx. */
function newRecoveryCode(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789'.padEnd(32, 'z');
  let code = '';
  for (let i = 0; i < 16; i++) code += (i > 0 && i % 4 === 0 ? '-' : '') + alphabet[randomInt(alphabet.length)];
  return code;
}

/** What a user may type for a recovery code: case, spaces and dashes do not matter. */
function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '');
}

const isTotpCode = (code: string) => /^\d{6}$/.test(code.replace(/\s/g, ''));

/**
 * Checks a code of an enrolled operator: a TOTP code (recorded as used) or an unused recovery
 * code (used up). Flushes what it records.
 */
export async function verifySecondFactor(em: EntityManager, operator: Operator, code: string): Promise<boolean> {
  if (!operator.totpSecret || !operator.totpEnabledAt) return false;
  if (isTotpCode(code)) {
    const step = acceptedStep(operator, operator.totpSecret, code.replace(/\s/g, ''));
    if (step === null) return false;
    operator.totpLastStep = step;
    await em.flush();
    return true;
  }
  const used = await em.nativeUpdate(
    OperatorRecoveryCodeSchema,
    { operatorId: operator.id, codeHash: sha256Hex(normalizeRecoveryCode(code)), usedAt: null },
    { usedAt: new Date() },
  );
  return used > 0;
}

/** A new secret to enrol (replacing one not yet confirmed); 'already_enabled' if two factors are on. */
export async function startEnrolment(
  em: EntityManager,
  operatorId: number,
): Promise<{ secret: string; otpauthUrl: string } | 'already_enabled'> {
  const operator = await em.findOneOrFail(OperatorSchema, { id: operatorId });
  if (operator.totpEnabledAt) return 'already_enabled';
  const secret = new Secret({ size: 20 }).base32;
  operator.totpPendingSecret = secret;
  await em.flush();
  return { secret, otpauthUrl: totp(operator, secret).toString() };
}

async function replaceRecoveryCodes(em: EntityManager, operatorId: number): Promise<string[]> {
  await em.nativeDelete(OperatorRecoveryCodeSchema, { operatorId });
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  for (const code of codes) em.create(OperatorRecoveryCodeSchema, { operatorId, codeHash: sha256Hex(normalizeRecoveryCode(code)) });
  await em.flush();
  return codes;
}

/**
 * Turns two factors on with the first code of the authenticator: ten recovery codes, shown
 * this once. The operator's other sessions, signed in with the password alone, end.
 */
export async function confirmEnrolment(
  em: EntityManager,
  input: { operatorId: number; sessionId: number; code: string },
): Promise<{ recoveryCodes: string[] } | 'not_enrolling' | 'already_enabled' | 'invalid_code'> {
  return em.transactional(async (tx) => {
    const operator = await tx.findOneOrFail(OperatorSchema, { id: input.operatorId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (operator.totpEnabledAt) return 'already_enabled';
    if (!operator.totpPendingSecret) return 'not_enrolling';
    const step = acceptedStep(operator, operator.totpPendingSecret, input.code.replace(/\s/g, ''));
    if (step === null) return 'invalid_code';
    operator.totpSecret = operator.totpPendingSecret;
    operator.totpPendingSecret = null;
    operator.totpEnabledAt = new Date();
    operator.totpLastStep = step;
    await tx.flush();
    await endSessions(tx, operator.id, input.sessionId);
    return { recoveryCodes: await replaceRecoveryCodes(tx, operator.id) };
  });
}

/** Ten new recovery codes for a right code (the old ones stop working). */
export async function renewRecoveryCodes(
  em: EntityManager,
  input: { operatorId: number; code: string },
): Promise<{ recoveryCodes: string[] } | 'not_enabled' | 'invalid_code'> {
  return em.transactional(async (tx) => {
    const operator = await tx.findOneOrFail(OperatorSchema, { id: input.operatorId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!operator.totpEnabledAt) return 'not_enabled';
    if (!(await verifySecondFactor(tx, operator, input.code))) return 'invalid_code';
    return { recoveryCodes: await replaceRecoveryCodes(tx, operator.id) };
  });
}

/** Turns two factors off for a right code (TOTP or recovery); the secret and codes are deleted. */
export async function disableTwoFactor(
  em: EntityManager,
  input: { operatorId: number; code: string },
): Promise<'disabled' | 'not_enabled' | 'invalid_code'> {
  return em.transactional(async (tx) => {
    const operator = await tx.findOneOrFail(OperatorSchema, { id: input.operatorId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!operator.totpEnabledAt) return 'not_enabled';
    if (!(await verifySecondFactor(tx, operator, input.code))) return 'invalid_code';
    operator.totpSecret = null;
    operator.totpEnabledAt = null;
    operator.totpPendingSecret = null;
    operator.totpLastStep = null;
    await tx.flush();
    await tx.nativeDelete(OperatorRecoveryCodeSchema, { operatorId: operator.id });
    return 'disabled';
  });
}

/** How many recovery codes the operator has left. */
export function countRecoveryCodes(em: EntityManager, operatorId: number): Promise<number> {
  return em.count(OperatorRecoveryCodeSchema, { operatorId, usedAt: null });
}

/** The identifier of the operator a pending sign-in belongs to (for the rate limit), or null if unknown or expired. */
export async function challengeOperator(em: EntityManager, challenge: string): Promise<string | null> {
  const row = await em.findOne(OperatorLoginChallengeSchema, { tokenHash: sha256Hex(challenge), expiresAt: { $gt: new Date() } });
  if (!row) return null;
  const operator = await em.findOne(OperatorSchema, { id: row.operatorId }, { fields: ['identifier'] });
  return operator?.identifier ?? null;
}

/**
 * The second step of a sign-in: a right code turns the challenge into a session (the
 * challenge is used up); a wrong one leaves it until it expires. Null for an unknown, expired or
 * used challenge, or a disabled operator.
 */
export async function completeTwoFactorLogin(
  em: EntityManager,
  input: { challenge: string; code: string; ttlSeconds: number; origin: SignInOrigin },
): Promise<{ kind: 'session'; token: string; expiresAt: Date; sessionId: number } | 'invalid_code' | null> {
  return em.transactional(async (tx) => {
    const row = await tx.findOne(
      OperatorLoginChallengeSchema,
      { tokenHash: sha256Hex(input.challenge), expiresAt: { $gt: new Date() } },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!row) return null;
    const operator = await tx.findOne(OperatorSchema, { id: row.operatorId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!operator || operator.disabledAt || !operator.totpEnabledAt) return null;
    const action = isTotpCode(input.code) ? 'sign_in.two_factor' : 'sign_in.recovery_code';
    const context = signInContext(input.origin, operator);
    if (!(await verifySecondFactor(tx, operator, input.code))) {
      await recordAudit(tx, context, { action, target: { operatorId: operator.id }, outcome: 'failure' });
      return 'invalid_code';
    }
    const from: SignInOrigin = { address: row.address ?? null, userAgent: row.userAgent ?? null };
    tx.remove(row);
    const session = await startSession(tx, operator.id, input.ttlSeconds, from);
    await recordAudit(tx, context, { action, target: { operatorId: operator.id, sessionId: session.sessionId } });
    return session;
  });
}

/**
 * Turns two factors off for an operator who lost both the authenticator and the recovery codes
 * (the command line only: whoever runs it holds the database already). Their sessions and
 * pending sign-ins end; false when there is no such operator.
 */
export async function removeTwoFactor(em: EntityManager, operatorId: number): Promise<boolean> {
  return em.transactional(async (tx) => {
    const operator = await tx.findOne(OperatorSchema, { id: operatorId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!operator) return false;
    operator.totpSecret = null;
    operator.totpEnabledAt = null;
    operator.totpPendingSecret = null;
    operator.totpLastStep = null;
    await tx.flush();
    await tx.nativeDelete(OperatorRecoveryCodeSchema, { operatorId });
    await tx.nativeDelete(OperatorLoginChallengeSchema, { operatorId });
    await endSessions(tx, operatorId);
    return true;
  });
}
