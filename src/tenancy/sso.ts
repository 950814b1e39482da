// Operators signing in through the OpenID provider: matched by their verified email, created
// only when the configuration names their grants, and handed their session through a one-time
// code (the dashboard exchanges it; the bearer token itself never travels in an address).
import { ForeignKeyConstraintViolationException, LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { OperatorLoginChallengeSchema, OperatorSchema, OperatorSessionSchema, type Operator } from '../db/entities/index.ts';
import { newToken, sha256Hex } from '../security/random.ts';
import { createOperator, normalizeEmail, signInContext, startSession, type SignInOrigin } from './operators.ts';
import { recordAudit } from '../audit/entries.ts';
import type { Grant } from './permissions.ts';

/** How long the one-time code of a finished sign-in may wait for the dashboard. */
export const SSO_CODE_TTL_SECONDS = 60;

// The code waits as a session row whose hash is salted apart from tokens' hashes: presented as
// a bearer token it matches nothing, and the exchange swaps it for a real token in one update.
const codeHash = (code: string) => sha256Hex(`sso-code:${code}`);

export type SsoSignIn =
  | { code: string; created: boolean }
  | 'operator_not_found'
  | 'operator_disabled'
  /** createOperators grants an account that does not exist: nobody is created. */
  | 'sso_grants_invalid';

async function findOrCreate(
  em: EntityManager,
  email: string,
  grants: Grant[] | false,
  hashCost: number,
): Promise<{ operator: Operator; created: boolean } | 'sso_grants_invalid' | null> {
  const existing = await em.findOne(OperatorSchema, { email: normalizeEmail(email) });
  if (existing) return { operator: existing, created: false };
  if (grants === false) return null;
  try {
    // A password nobody knows: this operator signs in through the provider (an operator with
    // operators:manage or the CLI can still give them one).
    return { operator: await createOperator(em.fork(), { email, password: newToken('unusable'), grants, hashCost }), created: true };
  } catch (err) {
    if (err instanceof ForeignKeyConstraintViolationException) return 'sso_grants_invalid';
    // The same person finishing two sign-ins at once: the other one created them.
    if (!(err instanceof UniqueConstraintViolationException)) throw err;
    const raced = await em.fork().findOne(OperatorSchema, { email: normalizeEmail(email) });
    return raced ? { operator: raced, created: false } : null;
  }
}

/** For a verified email: the operator's one-time code, or why there is none. */
export async function ssoSignIn(em: EntityManager, email: string, grants: Grant[] | false, hashCost: number): Promise<SsoSignIn> {
  const found = await findOrCreate(em, email, grants, hashCost);
  if (!found) return 'operator_not_found';
  if (found === 'sso_grants_invalid') return found;
  if (found.operator.disabledAt) return 'operator_disabled';
  const code = newToken('ssc');
  const expiresAt = new Date(Date.now() + SSO_CODE_TTL_SECONDS * 1000);
  em.create(OperatorSessionSchema, { operatorId: found.operator.id, tokenHash: codeHash(code), expiresAt });
  await em.flush();
  return { code, created: found.created };
}

/**
 * The code's session, once: a second exchange, or one after a minute, finds nothing (null). An
 * operator with two-factor sign-in gets no session from the provider alone: the code becomes the
 * same challenge a right password gives, for POST /login/two-factor (docs/security.md says why).
 */
export async function exchangeSsoCode(
  em: EntityManager,
  code: string,
  options: SignInOrigin & { ttlSeconds: number; challengeTtlSeconds: number },
): Promise<{ kind: 'session'; token: string; expiresAt: Date } | { kind: 'two-factor'; challenge: string; expiresAt: Date } | null> {
  return em.transactional(async (tx) => {
    const row = await tx.findOne(
      OperatorSessionSchema,
      { tokenHash: codeHash(code), expiresAt: { $gt: new Date() } },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!row) return null;
    // The code is used up whatever comes of it.
    tx.remove(row);
    const operator = await tx.findOne(OperatorSchema, { id: row.operatorId });
    if (!operator || operator.disabledAt) {
      await tx.flush();
      return null;
    }
    const from = { address: options.address?.slice(0, 64) ?? null, userAgent: options.userAgent?.slice(0, 512) ?? null };
    if (operator.totpEnabledAt) {
      const challenge = newToken('ptc');
      const expiresAt = new Date(Date.now() + options.challengeTtlSeconds * 1000);
      tx.create(OperatorLoginChallengeSchema, { operatorId: operator.id, tokenHash: sha256Hex(challenge), expiresAt, ...from });
      await tx.flush();
      await recordAudit(tx, signInContext(options, operator), {
        action: 'sign_in.sso',
        target: { operatorId: operator.id },
        changed: ['challenge'],
      });
      return { kind: 'two-factor', challenge, expiresAt };
    }
    const session = await startSession(tx, operator.id, options.ttlSeconds, from);
    await recordAudit(tx, signInContext(options, operator), {
      action: 'sign_in.sso',
      target: { operatorId: operator.id, sessionId: session.sessionId },
    });
    return session;
  });
}

/** A single sign-on the provider or Palaver refused: why, and the email the provider vouched for if any. */
export async function recordSsoRefusal(em: EntityManager, from: SignInOrigin, email: string | null, reason: string): Promise<void> {
  const operator = email ? await em.findOne(OperatorSchema, { email: normalizeEmail(email) }) : null;
  await recordAudit(em, signInContext(from, operator, email ? normalizeEmail(email).slice(0, 320) : ''), {
    action: 'sign_in.sso',
    target: { reason },
    outcome: 'refused',
  });
}
