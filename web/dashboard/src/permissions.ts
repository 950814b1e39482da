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

/**
 * What sends conversation content elsewhere (an API key, a webhook URL, the default Service,
 * push settings, a test event, the authorization secret) needs conversations:read beside its
 * own permission (src/api/admin/policy.ts).
 */
export function canSendContent(grants: readonly Grant[], permission: string, accountId: number | null): boolean {
  return can(grants, permission, accountId) && can(grants, 'conversations:read', accountId);
}

/** Why such a control is disabled: null when it is not. */
export function sendContentRefusal(grants: readonly Grant[], permission: string, accountId: number | null, what: string): string | null {
  if (canSendContent(grants, permission, accountId)) return null;
  return `${what} needs the ${permission} and conversations:read permissions on this account.`;
}
