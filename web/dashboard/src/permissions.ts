// What the server would refuse, to disable it beforehand (the server decides; the page only
// explains). The permission list and the rule are the server's own (src/contracts/permissions.ts).
import { allows, type Grant, type Permission } from '../../../src/contracts/permissions.ts';

export { PERMISSIONS, type Grant, type Permission } from '../../../src/contracts/permissions.ts';

export function can(grants: readonly Grant[], permission: Permission, accountId: number | null): boolean {
  return allows(grants, permission, accountId);
}

/**
 * What sends conversation content elsewhere (an API key, a webhook URL, the default Service,
 * push settings, a test event, the authorization secret) needs conversations:read beside its
 * own permission (src/api/admin/policy.ts).
 */
export function canSendContent(grants: readonly Grant[], permission: Permission, accountId: number | null): boolean {
  return can(grants, permission, accountId) && can(grants, 'conversations:read', accountId);
}

/** Why such a control is disabled: null when it is not. */
export function sendContentRefusal(
  grants: readonly Grant[],
  permission: Permission,
  accountId: number | null,
  what: string,
): string | null {
  if (canSendContent(grants, permission, accountId)) return null;
  return `${what} needs the ${permission} and conversations:read permissions on this account.`;
}
