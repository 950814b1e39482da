// What an operator may be granted and the rule that reads grants: the server's permission checks
// (tenancy/permissions.ts, api/admin/policy.ts) and the dashboard, which disables beforehand what
// the server would refuse, both use this one module (no Node imports: esbuild bundles it too).

/**
 * What an operator may be granted, per account or everywhere. '*' grants all of them.
 * Which Admin route needs which is its declaration's rule (api/admin/route.ts, policy.ts).
 */
export const PERMISSIONS = [
  'accounts:create',
  'accounts:read',
  'accounts:edit',
  'services:edit',
  'conversations:read',
  /** The team inbox: answer, write notes, change the status, assign oneself, take over from a bot. */
  'conversations:reply',
  /** The team inbox: assign conversations to other operators. */
  'conversations:assign',
  /** Erasing a user and everything of theirs (GDPR). */
  'users:delete',
  /** The deliveries log (its payloads hold conversations: the log needs conversations:read too). */
  'deliveries:read',
  'deliveries:manage',
  'operators:manage',
  /** The audit log: held on an account, that account's entries; everywhere, all of them (sign-ins too). */
  'audit:read',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export interface Grant {
  /** null: every account. */
  accountId: number | null;
  permission: Permission | '*';
}

export function isPermission(value: string): value is Permission | '*' {
  return value === '*' || (PERMISSIONS as readonly string[]).includes(value);
}

/** A permission also granted by holding another (managing a resource includes reading it). */
const IMPLIED_BY: Partial<Record<Permission, readonly Permission[]>> = {
  'deliveries:read': ['deliveries:manage'],
};

export function allows(grants: readonly Grant[], permission: Permission, accountId: number | null): boolean {
  const granting = [permission, ...(IMPLIED_BY[permission] ?? [])];
  return grants.some(
    (g) => (g.permission === '*' || granting.includes(g.permission)) && (g.accountId === null || g.accountId === accountId),
  );
}
