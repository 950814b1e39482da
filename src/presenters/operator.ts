import type { Operator } from '../db/entities/index.ts';
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
  };
}

/** The signed-in operator (GET /adminApi/session): the grants decide what the dashboard offers. */
export function presentSignedIn(operator: AuthenticatedOperator) {
  return {
    id: operator.id,
    email: operator.email,
    identifier: operator.identifier,
    grants: operator.grants,
    displayName: operator.displayName,
    avatarUrl: operator.avatarUrl,
  };
}
