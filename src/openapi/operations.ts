// Every route of the server, described once: method, path, which API, and the zod schemas the
// route validates with. document.ts turns this into OpenAPI; a test checks it against the
// routers, so a route cannot be added without being described.
import { z } from 'zod';
import * as admin from '../api/admin/schema.ts';
import * as clientApi from '../api/client/schema.ts';
import * as clientInput from '../commands/client/input.ts';
import * as service from '../api/service/schema.ts';
import * as web from '../api/web/widget.ts';

export type Api = 'health' | 'web' | 'admin' | 'client' | 'service';

export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI style: /users/{userId}. */
  path: string;
  api: Api;
  summary: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** multipart/form-data with one file field of this name. */
  upload?: string;
  status?: number;
  /** Served under the API's version prefixes only, not at the root. */
  versionedOnly?: boolean;
  /** An Admin route anyone may call (signing in): no operator token. */
  public?: boolean;
  /** The success answer's media type, when it is not the JSON envelope (scripts, pages). */
  produces?: string;
}

const dashboardAssetParams = z.object({ asset: z.enum(['app.js', 'app.css']) });

export const operations: Operation[] = [
  { method: 'get', path: '/healthz', api: 'health', summary: 'Liveness' },
  {
    method: 'get',
    path: '/readyz',
    api: 'health',
    summary: 'Readiness: 503 without the database; Redis reported (ok or degraded), never failing it',
  },
  { method: 'get', path: '/metrics', api: 'health', summary: 'Prometheus metrics (text format)' },
  { method: 'get', path: '/openapi.json', api: 'health', summary: 'This document' },
  {
    method: 'get',
    path: '/widget.js',
    api: 'web',
    summary: 'The chat widget script, newest build (cached 5 minutes, ETag)',
    produces: 'text/javascript',
  },
  {
    method: 'get',
    path: '/widget/{hash}',
    api: 'web',
    summary: 'One exact build of the widget script (<hash>.js, cached for good)',
    params: web.widgetBuildParams,
    produces: 'text/javascript',
  },
  { method: 'get', path: '/widget.json', api: 'web', summary: 'The newest widget build: its immutable path, integrity value and size' },
  {
    method: 'get',
    path: '/',
    api: 'web',
    summary: 'The demo page with the widget (demoPage.enabled; 404 otherwise)',
    produces: 'text/html',
  },
  { method: 'get', path: '/dashboard', api: 'web', summary: 'The operator dashboard (HTML)', produces: 'text/html' },
  {
    method: 'get',
    path: '/dashboard/{asset}',
    api: 'web',
    summary: "The dashboard's script and style (app.js, app.css)",
    params: dashboardAssetParams,
  },

  {
    method: 'post',
    path: '/adminApi/login',
    api: 'admin',
    summary: 'Operator login: a bearer token (403 password_sign_in_disabled when sso.passwordSignIn is false)',
    body: admin.loginBody,
    public: true,
  },
  {
    method: 'get',
    path: '/adminApi/login',
    api: 'admin',
    summary: 'How operators may sign in: {password, sso: {name, startUrl} | null}',
    public: true,
  },
  {
    method: 'get',
    path: '/adminApi/sso/start',
    api: 'admin',
    summary: 'Single sign-on: 302 to the OpenID provider (state, nonce and PKCE verifier in a sealed cookie)',
    status: 302,
    public: true,
  },
  {
    method: 'get',
    path: '/adminApi/sso/callback',
    api: 'admin',
    summary: "The provider's redirect: 302 to /dashboard#sso-code=… (or #sso-error=<code>)",
    query: admin.ssoCallbackQuery,
    status: 302,
    public: true,
  },
  {
    method: 'post',
    path: '/adminApi/sso/exchange',
    api: 'admin',
    summary: "A finished single sign-on's one-time code (valid a minute) for a bearer token",
    body: admin.ssoExchangeBody,
    public: true,
  },
  { method: 'get', path: '/adminApi/session', api: 'admin', summary: 'The signed-in operator and their grants' },
  { method: 'delete', path: '/adminApi/session', api: 'admin', summary: 'Sign out: the token is refused from now on' },
  { method: 'get', path: '/adminApi/accounts', api: 'admin', summary: 'Accounts the operator may read, by name' },
  { method: 'post', path: '/adminApi/accounts', api: 'admin', summary: 'Create an account', body: admin.createAccountBody, status: 201 },
  {
    method: 'get',
    path: '/adminApi/accounts/{accountId}',
    api: 'admin',
    summary: 'An account with its Services',
    params: admin.accountIdParams,
  },
  {
    method: 'patch',
    path: '/adminApi/accounts/{accountId}',
    api: 'admin',
    summary: 'Name, welcome and sticky messages, allowed widget origins',
    params: admin.accountIdParams,
    body: admin.updateAccountBody,
  },
  {
    method: 'post',
    path: '/adminApi/accounts/{accountId}/authorization-secret',
    api: 'admin',
    summary: "Rotate the account's authorization secret: the new one is shown once; the old one verifies headers for a grace period",
    params: admin.accountIdParams,
  },
  {
    method: 'put',
    path: '/adminApi/accounts/{accountId}/default-service',
    api: 'admin',
    summary: 'Change the default Service (changeDefaultService action)',
    params: admin.accountIdParams,
    body: admin.defaultServiceBody,
  },
  {
    method: 'post',
    path: '/adminApi/accounts/{accountId}/services',
    api: 'admin',
    summary: 'Attach a Service; answers its API key once',
    params: admin.accountIdParams,
    body: admin.createServiceBody,
    status: 201,
  },
  {
    method: 'get',
    path: '/adminApi/accounts/{accountId}/users',
    api: 'admin',
    summary: 'Users of the account, newest first',
    params: admin.accountIdParams,
    query: admin.usersQuery,
  },
  {
    method: 'get',
    path: '/adminApi/accounts/{accountId}/conversations',
    api: 'admin',
    summary: 'Live conversations of the account with their last message, by last activity (newest first; without messages last)',
    params: admin.accountIdParams,
    query: admin.conversationsQuery,
  },
  {
    method: 'get',
    path: '/adminApi/accounts/{accountId}/users/{userId}/messages',
    api: 'admin',
    summary: 'A conversation',
    params: admin.accountUserParams,
    query: admin.usersQuery,
  },
  {
    method: 'get',
    path: '/adminApi/accounts/{accountId}/media/{year}/{month}/{day}/{file}',
    api: 'admin',
    summary: "A file of a conversation, by a message's media reference img/<accountId>/<year>/<month>/<day>/<file>",
    params: admin.accountMediaParams,
    produces: '*/*',
  },
  {
    method: 'put',
    path: '/adminApi/accounts/{accountId}/users/{userId}/owner',
    api: 'admin',
    summary: 'Change the owner Service (changeOwner action, initiatedBy the operator)',
    params: admin.accountUserParams,
    body: admin.ownerBody,
  },
  {
    method: 'delete',
    path: '/adminApi/accounts/{accountId}/users/{userId}',
    api: 'admin',
    summary: 'Erase a user (GDPR): messages, files, devices, deliveries; audited in the log',
    params: admin.accountUserParams,
  },
  {
    method: 'post',
    path: '/adminApi/services/{serviceId}/test-event',
    api: 'admin',
    summary: "Send a signed test payload now (not through the outbox); answers the receiver's status and body",
    params: admin.serviceIdParams,
  },
  {
    method: 'patch',
    path: '/adminApi/services/{serviceId}',
    api: 'admin',
    summary: 'Name, webhook URL, enable or disable',
    params: admin.serviceIdParams,
    body: admin.updateServiceBody,
  },
  {
    method: 'get',
    path: '/adminApi/services/{serviceId}/deliveries',
    api: 'admin',
    summary: 'The deliveries log, by state, creation time (since, until) and user',
    params: admin.serviceIdParams,
    query: admin.serviceDeliveriesQuery,
  },
  {
    method: 'get',
    path: '/adminApi/services/{serviceId}/delivery-stats',
    api: 'admin',
    summary: 'Deliveries pending, dead and delivered, and the last hour per minute (attempts delivered and failed)',
    params: admin.serviceIdParams,
  },
  {
    method: 'get',
    path: '/adminApi/deliveries/{deliveryId}/attempts',
    api: 'admin',
    summary: 'Every attempt of a delivery (webhook or push): when, how long, status, error, outcome, next attempt',
    params: admin.deliveryIdParams,
  },
  {
    method: 'post',
    path: '/adminApi/services/{serviceId}/deliveries/retry',
    api: 'admin',
    summary: "Send the Service's deliveries that wait for a later attempt now (after its outage), each the head of its conversation",
    params: admin.serviceIdParams,
  },
  {
    method: 'post',
    path: '/adminApi/deliveries/{deliveryId}/redeliver',
    api: 'admin',
    summary: 'Send a dead delivery (webhook or push) again',
    params: admin.deliveryIdParams,
  },
  {
    method: 'get',
    path: '/adminApi/accounts/{accountId}/push-deliveries',
    api: 'admin',
    summary: "The push deliveries log: pushes to the account's devices",
    params: admin.accountIdParams,
    query: admin.deliveriesQuery,
  },
  {
    method: 'get',
    path: '/adminApi/accounts/{accountId}/push-settings',
    api: 'admin',
    summary: 'Push settings per kind (fcm, webhook, oauthWebhook); secrets only said to be set',
    params: admin.accountIdParams,
  },
  {
    method: 'put',
    path: '/adminApi/accounts/{accountId}/push-settings/{kind}',
    api: 'admin',
    summary:
      "Set one kind's push settings (fcm: the service-account JSON; webhook; oauth-webhook); a new webhook signing secret is shown once",
    params: admin.pushKindParams,
    body: admin.pushSettingsBody,
  },
  {
    method: 'delete',
    path: '/adminApi/accounts/{accountId}/push-settings/{kind}',
    api: 'admin',
    summary: "Remove one kind's push settings",
    params: admin.pushKindParams,
  },
  {
    method: 'get',
    path: '/adminApi/services/{serviceId}/keys',
    api: 'admin',
    summary: 'API keys (without their secret)',
    params: admin.serviceIdParams,
  },
  {
    method: 'post',
    path: '/adminApi/services/{serviceId}/keys',
    api: 'admin',
    summary: 'A new API key, shown once',
    params: admin.serviceIdParams,
    status: 201,
  },
  {
    method: 'delete',
    path: '/adminApi/services/{serviceId}/keys/{keyId}',
    api: 'admin',
    summary: 'Revoke an API key',
    params: admin.keyParams,
  },
  {
    method: 'post',
    path: '/adminApi/services/{serviceId}/signing-secret',
    api: 'admin',
    summary: 'Rotate the signing secret (the old one signs too for a grace period)',
    params: admin.serviceIdParams,
  },
  { method: 'get', path: '/adminApi/operators', api: 'admin', summary: 'Operators and their grants' },
  { method: 'post', path: '/adminApi/operators', api: 'admin', summary: 'Create an operator', body: admin.createOperatorBody, status: 201 },
  {
    method: 'put',
    path: '/adminApi/operators/{operatorId}/grants',
    api: 'admin',
    summary: "Replace an operator's grants; one's own keep operators:manage everywhere (409 cannot_remove_own_operators_manage)",
    params: admin.operatorIdParams,
    body: admin.grantsBody,
  },
  {
    method: 'put',
    path: '/adminApi/operators/{operatorId}/disabled',
    api: 'admin',
    summary: 'Disable an operator (no sign-in, sessions ended) or enable them again; not oneself (409 cannot_disable_self)',
    params: admin.operatorIdParams,
    body: admin.operatorDisabledBody,
  },

  {
    method: 'post',
    path: '/devices',
    api: 'client',
    summary: 'Register a device: anonymous, registered, or merge',
    body: clientInput.deviceBody,
  },
  {
    method: 'post',
    path: '/messages',
    api: 'client',
    summary: 'Send a message (text, image, client system message)',
    body: clientInput.messageBody,
  },
  { method: 'get', path: '/messages', api: 'client', summary: 'The conversation, newest first' },
  { method: 'get', path: '/messages/unseen/count', api: 'client', summary: 'Agent messages not yet seen' },
  {
    method: 'put',
    path: '/messages/status/{status}',
    api: 'client',
    summary: 'Raise the status of own messages',
    params: clientApi.statusParams,
    body: clientApi.statusBody,
  },
  {
    method: 'get',
    path: '/messages/{cursor}',
    api: 'client',
    summary: 'One message, or a page: before:{id}, after:{id}',
    params: clientApi.messageCursorParams,
  },
  {
    method: 'post',
    path: '/services/event/{name}',
    api: 'client',
    summary: 'startTyping, stopTyping or ChatOpened',
    params: clientApi.eventParams,
  },
  { method: 'post', path: '/media', api: 'client', summary: 'Upload an image, document, audio or video file', upload: 'media' },
  {
    method: 'get',
    path: '/media/{year}/{month}/{day}/{file}',
    api: 'client',
    summary: "An upload of the caller's conversation",
    params: clientApi.mediaParams,
  },

  { method: 'get', path: '/users/{userId}', api: 'service', summary: 'A user', params: service.userIdParams },
  {
    method: 'get',
    path: '/users/{userId}/messages',
    api: 'service',
    summary: 'A conversation, all of it',
    params: service.userIdParams,
    query: service.serviceMessagesQuery,
  },
  {
    method: 'put',
    path: '/users/{userId}/owner',
    api: 'service',
    summary: 'Change the owner (changeOwner action)',
    params: service.userIdParams,
    body: service.ownerBody,
  },
  {
    method: 'post',
    path: '/users/{userId}/messages',
    api: 'service',
    summary: 'An agent message; the agent becomes current',
    params: service.userIdParams,
    body: service.agentMessageBody,
    status: 201,
  },
  {
    method: 'post',
    path: '/users/{userId}/media',
    api: 'service',
    summary: 'Upload a file to the conversation, for an agent message',
    params: service.userIdParams,
    upload: 'media',
    status: 201,
  },
  {
    method: 'post',
    path: '/users/{userId}/typing',
    api: 'service',
    summary: 'An agent is typing (stops by itself)',
    params: service.userIdParams,
    body: service.typingBody,
  },
  {
    method: 'get',
    path: '/media/{accountId}/{year}/{month}/{day}/{file}',
    api: 'service',
    summary: 'An upload of a conversation of the account: the <ref> of {{img/<ref>}}',
    params: service.serviceMediaParams,
    versionedOnly: true,
  },
  { method: 'put', path: '/users/{userId}/agent/unset', api: 'service', summary: 'No current agent (2.3.0)', params: service.userIdParams },
];
