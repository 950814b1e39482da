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
  /** Body fields that, when sent, need more permissions on that account (authorizeFields()). */
  fields?: Readonly<Record<string, readonly Permission[]>>;
}

const rule = (scope: Scope, ...permissions: Permission[]): Rule => ({ scope, permissions });

/**
 * Routes under /adminApi anyone may call: signing in (password, the two-factor step, single sign-on)
 * and a reset link's new password. They take no token and are not in ADMIN_POLICY; this is the one
 * list of them (routers.ts mounts them before requireOperator(), the permission test walks it).
 */
export const PUBLIC_ADMIN_ROUTES = [
  'POST /login',
  'GET /login',
  'POST /login/two-factor',
  'POST /password-reset',
  'GET /sso/start',
  'GET /sso/callback',
  'POST /sso/exchange',
] as const;

/**
 * What creates a credential that reads conversations, or changes where their content is sent,
 * is as much as reading them: it also needs `conversations:read` on the account.
 */
const SENDS_CONTENT: Permission = 'conversations:read';

/** `METHOD path` under /adminApi → its rule. The public routes above (PUBLIC_ADMIN_ROUTES) are not listed. */
export const ADMIN_POLICY = {
  'GET /session': rule('session'),
  'DELETE /session': rule('session'),
  // The operator's own account: only their own password, second factor and sessions.
  'PUT /me/password': rule('session'),
  'GET /me/sessions': rule('session'),
  'DELETE /me/sessions/:sessionId': rule('session'),
  'POST /me/two-factor': rule('session'),
  'POST /me/two-factor/confirm': rule('session'),
  'POST /me/two-factor/recovery-codes': rule('session'),
  'POST /me/two-factor/disable': rule('session'),
  // One's own display name and avatar.
  'PATCH /session': rule('session'),
  'GET /accounts': rule('listing', 'accounts:read'),
  'POST /accounts': rule('everywhere', 'accounts:create'),
  'GET /accounts/:accountId': rule('account', 'accounts:read'),
  'PATCH /accounts/:accountId': rule('account', 'accounts:edit'),
  // The new secret is shown in the answer, and whoever holds it can sign in as any customer.
  'POST /accounts/:accountId/authorization-secret': rule('account', 'accounts:edit', SENDS_CONTENT),
  // New conversations go to the default Service's webhook.
  'PUT /accounts/:accountId/default-service': rule('account', 'services:edit', SENDS_CONTENT),
  // The answer holds the new Service's first API key (and it may name a webhook URL).
  'POST /accounts/:accountId/services': rule('account', 'services:edit', SENDS_CONTENT),
  // A name or enabling it changes nothing of where content goes; a webhook URL does.
  'PATCH /services/:serviceId': { ...rule('record', 'services:edit'), fields: { webhookUrl: [SENDS_CONTENT] } },
  // Lists keys without their secret.
  'GET /services/:serviceId/keys': rule('record', 'services:edit'),
  // A key reads every user and conversation of the account through the Service API.
  'POST /services/:serviceId/keys': rule('record', 'services:edit', SENDS_CONTENT),
  'DELETE /services/:serviceId/keys/:keyId': rule('record', 'services:edit'),
  // Signs what is sent to the Service's own receiver; it reads nothing.
  'POST /services/:serviceId/signing-secret': rule('record', 'services:edit'),
  // A signed POST to the webhook URL now, its answer shown.
  'POST /services/:serviceId/test-event': rule('record', 'services:edit', SENDS_CONTENT),
  'GET /accounts/:accountId/users': rule('account', 'conversations:read'),
  'GET /accounts/:accountId/conversations': rule('account', 'conversations:read'),
  'GET /accounts/:accountId/users/:userId/messages': rule('account', 'conversations:read'),
  // Files sent in conversations: their content, like the messages'.
  'GET /accounts/:accountId/media/:year/:month/:day/:file': rule('account', 'conversations:read'),
  // An operator-initiated changeOwner (docs/dashboard.md): a Service setting, on a conversation.
  'PUT /accounts/:accountId/users/:userId/owner': rule('account', 'services:edit', 'conversations:read'),
  // The team inbox (docs/dashboard.md): answering as an agent, and typing to the customer.
  'POST /accounts/:accountId/users/:userId/messages': rule('account', 'conversations:reply'),
  'POST /accounts/:accountId/users/:userId/typing': rule('account', 'conversations:reply'),
  // A file for an answer: stored in the conversation, counted in the account's storage quota.
  'POST /accounts/:accountId/users/:userId/media': rule('account', 'conversations:reply'),
  'GET /accounts/:accountId/inbox': rule('account', 'conversations:read'),
  // Notes and status lines are the conversation's content.
  'GET /accounts/:accountId/users/:userId/timeline': rule('account', 'conversations:read'),
  // Assigning another operator (not oneself) also needs conversations:assign, checked in the route.
  'PUT /accounts/:accountId/users/:userId/assignee': rule('account', 'conversations:reply'),
  'PUT /accounts/:accountId/users/:userId/status': rule('account', 'conversations:reply'),
  'POST /accounts/:accountId/users/:userId/notes': rule('account', 'conversations:reply'),
  'PUT /accounts/:accountId/users/:userId/read': rule('account', 'conversations:read'),
  // Only ever to the account's own inbox: answering includes taking over from a bot.
  'POST /accounts/:accountId/users/:userId/take-over': rule('account', 'conversations:reply'),
  // Which Services are active, offered it and listening: read as the conversation is.
  'GET /accounts/:accountId/users/:userId/handover': rule('account', 'conversations:read'),
  // Read by whoever answers; managed as the account's settings are.
  'GET /accounts/:accountId/canned-replies': rule('account', 'conversations:read'),
  'POST /accounts/:accountId/canned-replies': rule('account', 'accounts:edit'),
  'PATCH /accounts/:accountId/canned-replies/:replyId': rule('account', 'accounts:edit'),
  'DELETE /accounts/:accountId/canned-replies/:replyId': rule('account', 'accounts:edit'),
  // Erasure (GDPR): the user, their messages, files, devices and deliveries.
  'DELETE /accounts/:accountId/users/:userId': rule('account', 'users:delete'),
  'GET /operators': rule('everywhere', 'operators:manage'),
  'POST /operators': rule('everywhere', 'operators:manage'),
  'PUT /operators/:operatorId/grants': rule('everywhere', 'operators:manage'),
  'PUT /operators/:operatorId/disabled': rule('everywhere', 'operators:manage'),
  // The link sets the operator's password: as much as making an operator.
  'POST /operators/:operatorId/password-reset': rule('everywhere', 'operators:manage'),
  'GET /operators/:operatorId/sessions': rule('everywhere', 'operators:manage'),
  'DELETE /operators/:operatorId/sessions': rule('everywhere', 'operators:manage'),
  'DELETE /operators/:operatorId/sessions/:sessionId': rule('everywhere', 'operators:manage'),
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
  'GET /accounts/:accountId/email-deliveries': rule('account', 'deliveries:read', 'conversations:read'),
  // The settings hold secrets, never returned; reading them says which are set.
  'GET /accounts/:accountId/push-settings': rule('account', 'accounts:read'),
  // Pushes carry agent message texts to the webhook (or FCM project) set here.
  'PUT /accounts/:accountId/push-settings/:kind': rule('account', 'accounts:edit', SENDS_CONTENT),
  // Stops pushes; sends nothing anywhere.
  'DELETE /accounts/:accountId/push-settings/:kind': rule('account', 'accounts:edit'),
} satisfies Record<string, Rule>;

export type AdminRoute = keyof typeof ADMIN_POLICY;
