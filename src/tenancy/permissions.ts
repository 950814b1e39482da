// The permission rule (src/contracts/permissions.ts, shared with the dashboard) and what the server
// asks of it beyond one permission.
import { allows, type Grant, type Permission } from '../contracts/permissions.ts';

export { allows, isPermission, PERMISSIONS, type Grant, type Permission } from '../contracts/permissions.ts';

/** Every permission, each on the account (null: asked everywhere). */
export function allowsAll(grants: readonly Grant[], permissions: readonly Permission[], accountId: number | null): boolean {
  return permissions.every((p) => allows(grants, p, accountId));
}

/** Whether some one scope (an account, or everywhere) holds every permission. */
export function allowsSomewhere(grants: readonly Grant[], permissions: readonly Permission[]): boolean {
  const scopes = new Set(grants.map((g) => g.accountId));
  return [...scopes].some((accountId) => allowsAll(grants, permissions, accountId));
}
