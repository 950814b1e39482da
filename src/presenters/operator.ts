import type { Operator, OperatorSession } from '../db/entities/index.ts';
import type { Grant } from '../tenancy/permissions.ts';
import type { AuthenticatedOperator } from '../tenancy/operators.ts';

export function presentOperator(operator: Operator, grants: Grant[]) {
  return {
    id: operator.id,
    email: operator.email,
    identifier: operator.identifier,
    grants,
    displayName: operator.displayName ?? null,
    avatarUrl: operator.avatarUrl ?? null,
    createdAt: operator.createdAt.toISOString(),
    disabledAt: operator.disabledAt ? operator.disabledAt.toISOString() : null,
    twoFactorEnabled: operator.totpEnabledAt != null,
  };
}

/**
 * The signed-in operator (GET /adminApi/session): the grants decide what the dashboard offers;
 * `twoFactor.requiredBy` names the accounts whose grants wait for the operator to enrol.
 */
export function presentSignedIn(operator: AuthenticatedOperator, recoveryCodesLeft: number) {
  return {
    id: operator.id,
    email: operator.email,
    identifier: operator.identifier,
    grants: operator.grants,
    displayName: operator.displayName,
    avatarUrl: operator.avatarUrl,
    twoFactor: { enabled: operator.twoFactorEnabled, requiredBy: operator.twoFactorRequiredBy, recoveryCodesLeft },
  };
}

/** The answer of a right password: a session, or the challenge of the second step. */
export function presentLogin(
  result: { kind: 'session'; token: string; expiresAt: Date } | { kind: 'two-factor'; challenge: string; expiresAt: Date },
) {
  if (result.kind === 'session') return { token: result.token, expiresAt: result.expiresAt.toISOString() };
  return { twoFactorRequired: true, challenge: result.challenge, challengeExpiresAt: result.expiresAt.toISOString() };
}

/** A session as its operator (or one who manages operators) sees it; never its token. */
export function presentOperatorSession(session: OperatorSession, currentSessionId: number | null) {
  return {
    id: session.id,
    createdAt: session.createdAt.toISOString(),
    lastUsedAt: session.lastUsedAt ? session.lastUsedAt.toISOString() : null,
    expiresAt: session.expiresAt.toISOString(),
    address: session.address ?? null,
    userAgent: session.userAgent ?? null,
    current: session.id === currentSessionId,
  };
}
