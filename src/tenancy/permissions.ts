/** What an operator may be granted, per account or everywhere. '*' grants all of them. */
export const PERMISSIONS = [
  'accounts:create',
  'accounts:read',
  'accounts:edit',
  'services:edit',
  'conversations:read',
  'deliveries:manage',
  'operators:manage',
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

export function allows(grants: readonly Grant[], permission: Permission, accountId: number | null): boolean {
  return grants.some(
    (g) =>
      (g.permission === '*' || g.permission === permission) &&
      (g.accountId === null || g.accountId === accountId),
  );
}
