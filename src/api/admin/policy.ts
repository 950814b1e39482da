// Who may call which Admin route: the one table every admin route is decided by (auth.ts applies
// it; test/admin-permissions.test.ts walks it route by route, permission by permission).
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
}

const rule = (scope: Scope, ...permissions: Permission[]): Rule => ({ scope, permissions });

/** Routes under /adminApi anyone may call: signing in. They take no token and are not in ADMIN_POLICY. */
export const PUBLIC_ADMIN_ROUTES = ['POST /login', 'GET /login', 'GET /sso/start', 'GET /sso/callback', 'POST /sso/exchange'] as const;

/** `METHOD path` under /adminApi → its rule. The public routes above are not listed. */
export const ADMIN_POLICY = {
  'GET /session': rule('session'),
  'DELETE /session': rule('session'),
  'GET /accounts': rule('listing', 'accounts:read'),
  'POST /accounts': rule('everywhere', 'accounts:create'),
  'GET /accounts/:accountId': rule('account', 'accounts:read'),
  'PATCH /accounts/:accountId': rule('account', 'accounts:edit'),
  // The new secret is shown in the answer: as much as editing the account.
  'POST /accounts/:accountId/authorization-secret': rule('account', 'accounts:edit'),
  'PUT /accounts/:accountId/default-service': rule('account', 'services:edit'),
  'POST /accounts/:accountId/services': rule('account', 'services:edit'),
  'PATCH /services/:serviceId': rule('record', 'services:edit'),
  'GET /services/:serviceId/keys': rule('record', 'services:edit'),
  'POST /services/:serviceId/keys': rule('record', 'services:edit'),
  'DELETE /services/:serviceId/keys/:keyId': rule('record', 'services:edit'),
  'POST /services/:serviceId/signing-secret': rule('record', 'services:edit'),
  'POST /services/:serviceId/test-event': rule('record', 'services:edit'),
  'GET /accounts/:accountId/users': rule('account', 'conversations:read'),
  'GET /accounts/:accountId/conversations': rule('account', 'conversations:read'),
  'GET /accounts/:accountId/users/:userId/messages': rule('account', 'conversations:read'),
  // Files sent in conversations: their content, like the messages'.
  'GET /accounts/:accountId/media/:year/:month/:day/:file': rule('account', 'conversations:read'),
  // An operator-initiated changeOwner (docs/dashboard.md): a Service setting, on a conversation.
  'PUT /accounts/:accountId/users/:userId/owner': rule('account', 'services:edit', 'conversations:read'),
  // Erasure (GDPR): the user, their messages, files, devices and deliveries.
  'DELETE /accounts/:accountId/users/:userId': rule('account', 'users:delete'),
  'GET /operators': rule('everywhere', 'operators:manage'),
  'POST /operators': rule('everywhere', 'operators:manage'),
  'PUT /operators/:operatorId/grants': rule('everywhere', 'operators:manage'),
  'PUT /operators/:operatorId/disabled': rule('everywhere', 'operators:manage'),
  // Webhook payloads hold message text and user information: the conversation itself.
  'GET /services/:serviceId/deliveries': rule('record', 'deliveries:read', 'conversations:read'),
  // Counts only, no payload: the conversation is not read.
  'GET /services/:serviceId/delivery-stats': rule('record', 'deliveries:read'),
  // Moves attempts forward; no payload is read or shown.
  'POST /services/:serviceId/deliveries/retry': rule('record', 'deliveries:manage'),
  'POST /deliveries/:deliveryId/redeliver': rule('record', 'deliveries:manage', 'conversations:read'),
  // Statuses and errors only, no payload.
  'GET /deliveries/:deliveryId/attempts': rule('record', 'deliveries:read'),
  // Push payloads hold message text too.
  'GET /accounts/:accountId/push-deliveries': rule('account', 'deliveries:read', 'conversations:read'),
  // The settings hold secrets, never returned; reading them says which are set.
  'GET /accounts/:accountId/push-settings': rule('account', 'accounts:read'),
  'PUT /accounts/:accountId/push-settings/:kind': rule('account', 'accounts:edit'),
  'DELETE /accounts/:accountId/push-settings/:kind': rule('account', 'accounts:edit'),
} satisfies Record<string, Rule>;

export type AdminRoute = keyof typeof ADMIN_POLICY;
