import type { Operator } from '../db/entities/index.ts';
import type { Grant } from '../tenancy/permissions.ts';

export function presentOperator(operator: Operator, grants: Grant[]) {
  return {
    id: operator.id,
    email: operator.email,
    identifier: operator.identifier,
    grants,
    createdAt: operator.createdAt.toISOString(),
  };
}
