// Who may call an Admin route: the rule each route declaration (route.ts) carries. operator-access.ts applies
// the rule of the route being served; test/admin-permissions.test.ts walks every declaration,
// permission by permission.
import type { Permission } from '../../tenancy/permissions.ts';

/**
 * Where the permissions must be held:
 * - `everywhere`: by a grant with no account (operators, new accounts).
 * - `account`: on the account named in the path (`:accountId`). Any other account answers 403
 *   `permission_denied`, whether it exists or not.
 * - `record`: on the account of the record named in the path (a Service, a delivery). A record
 *   of an account the operator may not act on answers exactly as an unknown id does (404 with
 *   the same code); an operator holding the permissions on no account at all gets 403.
 * - `listing`: on some account or everywhere; the answer lists only the accounts where they are
 *   held. Holding them nowhere: 403.
 * - `session`: no permission, only a valid token (the operator's own session).
 */
export type Scope = 'everywhere' | 'account' | 'record' | 'listing' | 'session';

export interface Rule {
  scope: Scope;
  /** Every one of them is needed, on the same account. */
  permissions: readonly Permission[];
  /** Body fields that, when sent, need more permissions on that account (authorizeFields()). */
  fields?: Readonly<Record<string, readonly Permission[]>>;
}

/** What a route's declaration (route.ts) says of who may call it: what operator-access.ts reads of the route served. */
export interface DeclaredRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Koa style, under /adminApi: /services/:serviceId. */
  path: string;
  /** 'public': anyone, without a token (signing in, a reset link). */
  rule: Rule | 'public';
  /**
   * The audit log's action for what the route changes (`service.update`), which its command
   * records in the change's transaction; sign-in steps record their own (`sign_in.password`).
   */
  audit?: string;
}

export const rule = (scope: Scope, ...permissions: Permission[]): Rule => ({ scope, permissions });

/**
 * What creates a credential that reads conversations, or changes where their content is sent,
 * is as much as reading them: it also needs `conversations:read` on the account.
 */
export const SENDS_CONTENT: Permission = 'conversations:read';
