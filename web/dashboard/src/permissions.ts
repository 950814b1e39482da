// The same rule as src/tenancy/permissions.ts, to disable what the server would refuse (the
// server decides; the page only explains beforehand).
import type { Grant } from './types.ts';

const IMPLIED_BY: Record<string, string[]> = { 'deliveries:read': ['deliveries:manage'] };

export function can(grants: readonly Grant[], permission: string, accountId: number | null): boolean {
  const granting = [permission, ...(IMPLIED_BY[permission] ?? [])];
  return grants.some(
    (g) => (g.permission === '*' || granting.includes(g.permission)) && (g.accountId === null || g.accountId === accountId),
  );
}
