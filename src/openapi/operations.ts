// Every route of the server, described once: method, path, which API, and the zod schemas the
// route validates with (the Admin API's come from its route declarations). document.ts turns this into OpenAPI; a test checks it against the
// routers, so a route cannot be added without being described.
import { z } from 'zod';
import { ADMIN_ROUTES } from '../api/admin/routers.ts';
import * as clientApi from '../api/client/schema.ts';
import * as clientInput from '../commands/client/input.ts';
import * as service from '../api/service/schema.ts';
import * as web from '../api/web/widget.ts';
import { emailLinkParams } from '../api/web/email.ts';
import { conversationLinkBody } from '../api/client/chat-settings.ts';
import { hoursQuery } from '../api/service/account.ts';
import { contactBody } from '../conversations/contact.ts';

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

/** The Admin API, from its route declarations (api/admin/route.ts): each route is described where it is declared. */
function adminOperations(): Operation[] {
  return ADMIN_ROUTES.map((route) => ({
    method: route.method.toLowerCase() as Operation['method'],
    path: `/adminApi${route.path.replace(/:(\w+)/g, '{$1}')}`,
    api: 'admin',
    summary: route.summary,
    params: route.params,
    query: route.query,
    body: route.body ?? route.bodyByPath,
    upload: route.upload,
    status: route.status,
    produces: route.produces,
    public: route.rule === 'public',
  }));
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
  {
    method: 'get',
    path: '/email/media/{token}',
    api: 'web',
    summary: 'A file of an emailed answer, by its signed, expiring link (no login)',
    params: emailLinkParams,
  },
  {
    method: 'get',
    path: '/email/unsubscribe/{token}',
    api: 'web',
    summary: 'The unsubscribe link of an email: a page with the button',
    params: emailLinkParams,
    produces: 'text/html',
  },
  {
    method: 'post',
    path: '/email/unsubscribe/{token}',
    api: 'web',
    summary: 'Unsubscribe from answers by email (the button, or one-click unsubscribe, RFC 8058)',
    params: emailLinkParams,
    produces: 'text/html',
  },
  {
    method: 'post',
    path: '/email/inbound',
    api: 'web',
    summary:
      "A customer's reply by email from a hosted mail provider: the raw message (message/rfc822, or a multipart or JSON field); email.inbound.webhookSecret",
  },
  { method: 'get', path: '/dashboard', api: 'web', summary: 'The operator dashboard (HTML)', produces: 'text/html' },
  {
    method: 'get',
    path: '/dashboard/{asset}',
    api: 'web',
    summary: "The dashboard's script and style (app.js, app.css)",
    params: dashboardAssetParams,
  },

  ...adminOperations(),

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
  { method: 'get', path: '/users/me/contact', api: 'client', summary: "The caller's contact details (email, name, language)" },
  {
    method: 'put',
    path: '/users/me/contact',
    api: 'client',
    summary: "Set the caller's contact details (409 contact_set_by_service when their backend set them)",
    body: contactBody,
  },
  {
    method: 'get',
    path: '/chat-settings',
    api: 'client',
    summary: "The widget's settings: the pre-chat form, the usual reply time, and whether the team is in now (business hours)",
  },
  {
    method: 'post',
    path: '/conversation-link',
    api: 'client',
    summary:
      "Redeem an email's #palaver-conversation token: open the conversation on this device, or on a new device of its anonymous user",
    body: conversationLinkBody,
  },
  {
    method: 'post',
    path: '/users/me/transcript',
    api: 'client',
    summary:
      'Email the conversation to the address on the caller (202; 409 email_unknown, email_unsubscribed, conversation_empty, email_not_configured; 429)',
    status: 202,
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
    method: 'put',
    path: '/users/{userId}/contact',
    api: 'service',
    summary: "Set the user's contact details (email, name, language); they win over the customer's own",
    params: service.userIdParams,
    body: contactBody,
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
  {
    method: 'get',
    path: '/users/{userId}/handover',
    api: 'service',
    summary: "The conversation's active, pending and standby Services",
    params: service.userIdParams,
  },
  {
    method: 'post',
    path: '/users/{userId}/handover/pass',
    api: 'service',
    summary: 'Pass control to a named Service or the next one (the owner only)',
    params: service.userIdParams,
    body: service.passBody,
  },
  {
    method: 'post',
    path: '/users/{userId}/handover/offer',
    api: 'service',
    summary: 'Offer control: the target is pending until it accepts or the offer times out (the owner only)',
    params: service.userIdParams,
    body: service.offerBody,
  },
  {
    method: 'post',
    path: '/users/{userId}/handover/accept',
    api: 'service',
    summary: 'Accept an offer of control (the pending Service only)',
    params: service.userIdParams,
    body: service.acceptBody,
  },
  {
    method: 'post',
    path: '/users/{userId}/handover/release',
    api: 'service',
    summary: "Release control to the caller's next Service or the account's default (the owner only)",
    params: service.userIdParams,
    body: service.releaseBody,
  },
  {
    method: 'post',
    path: '/deliveries/retry',
    api: 'service',
    summary: "Send the calling Service's deliveries that wait for a later attempt now (it is back), each the head of its conversation",
  },
  {
    method: 'get',
    path: '/account/hours',
    api: 'service',
    summary: "The account's business hours, and whether the team is in at `at` (now by default), when it closes or opens next",
    query: hoursQuery,
  },
];
