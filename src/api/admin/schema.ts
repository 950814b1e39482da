import { z } from 'zod';
import { createPrivateKey } from 'node:crypto';
import type { ActivityCursor } from '../../conversations/by-activity.ts';
import type { InboxCursor } from '../../conversations/inbox.ts';
import { chatSettingsChanges } from '../../tenancy/chat-settings.ts';
import { isPermission } from '../../tenancy/permissions.ts';
import { RICH_LIMITS } from '../service/schema.ts';
import { newPassword } from '../../security/password-policy.ts';

export const loginBody = z.object({
  email: z.string().email(),
  password: z.string().min(1).max(1024),
});

export const accountIdParams = z.object({
  accountId: z.coerce.number().int().positive(),
});

/**
 * An upload of a conversation of the account, by the path a message's media reference carries
 * (`img/<accountId>/<year>/<month>/<day>/<file>`, as the Client and Service API name it).
 */
export const accountMediaParams = accountIdParams.extend({
  year: z.string().regex(/^\d{4}$/),
  month: z.string().regex(/^\d{1,2}$/),
  day: z.string().regex(/^\d{1,2}$/),
  file: z.string().regex(/^[0-9a-f-]{36}\.[a-z0-9]{2,4}$/),
});

export const createAccountBody = z.object({
  name: z.string().trim().min(1).max(255),
});

const webhookUrl = z
  .string()
  .url()
  .max(2048)
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL');

export const createServiceBody = z.object({
  name: z.string().trim().min(1).max(255),
  webhookUrl: webhookUrl.nullish(),
});

export const serviceIdParams = z.object({
  serviceId: z.coerce.number().int().positive(),
});

export const updateServiceBody = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    webhookUrl: webhookUrl.nullable().optional(),
    /** false switches the Service off (it receives nothing); true switches it back on, also after a 410. */
    enabled: z.boolean().optional(),
    /** Which conversations it does not own the Service hears of (docs/service-api.md, "The switchboard"). */
    standby: z.enum(['none', 'all', 'participated']).optional(),
    /** The payload kinds its webhook wants. */
    webhookKinds: z
      .array(z.enum(['messages', 'events', 'actions']))
      .max(3)
      .refine((kinds) => new Set(kinds).size === kinds.length, 'each kind once')
      .optional(),
    /** The identification of the Service its pass without target, its release and its switching off hand to; null for none. */
    handoverNext: z.string().min(1).max(64).nullable().optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, 'give at least one of name, webhookUrl, enabled, standby, webhookKinds, handoverNext');

export const deliveriesQuery = z.object({
  state: z.enum(['pending', 'delivered', 'dead']).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** The `paging.before` cursor of the previous page. */
  before: z.coerce.number().int().positive().optional(),
});

/**
 * A Service's log also by time (created at or after `since`, before `until`) and by user: the
 * user a webhook is about is its chain's ordering key.
 */
export const serviceDeliveriesQuery = deliveriesQuery
  .extend({
    since: z.string().datetime({ offset: true }).optional(),
    until: z.string().datetime({ offset: true }).optional(),
    userId: z.coerce.number().int().positive().optional(),
  })
  .refine((q) => !q.since || !q.until || Date.parse(q.since) < Date.parse(q.until), {
    message: 'until must be after since',
    path: ['until'],
  });

export const deliveryIdParams = z.object({
  deliveryId: z.string().uuid(),
});

export const defaultServiceBody = z.object({
  serviceIdentification: z.string().min(1).max(64),
});

/** The new owner Service of a user, by its identification (as PUT /users/{userId}/owner of the Service API). */
export const ownerBody = z.object({
  serviceIdentification: z.string().min(1).max(64),
});

export const keyParams = z.object({
  serviceId: z.coerce.number().int().positive(),
  keyId: z.coerce.number().int().positive(),
});

/** A web origin as browsers send it: scheme, host and port only, lower case. */
const webOrigin = z
  .string()
  .max(2048)
  .transform((value) => value.trim().toLowerCase())
  .refine((value) => {
    try {
      const url = new URL(value);
      return /^https?:$/.test(url.protocol) && url.origin === value;
    } catch {
      return false;
    }
  }, 'must be an origin such as https://shop.example (scheme, host and port; no path)');

export const updateAccountBody = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    welcomeMessage: z.string().max(2000).nullable().optional(),
    stickyMessage: z.string().max(2000).nullable().optional(),
    /** Pages that may call the Client API from a browser; empty: any origin. */
    allowedOrigins: z.array(webOrigin).max(100).optional(),
    /** Every operator with grants on the account must sign in with two factors to use them. */
    requireTwoFactor: z.boolean().optional(),
    /** The widget's pre-chat form, business hours and usual reply time (tenancy/chat-settings.ts). */
    ...chatSettingsChanges,
  })
  .strict()
  .refine(
    (body) => Object.keys(body).length > 0,
    'give at least one of name, welcomeMessage, stickyMessage, allowedOrigins, requireTwoFactor, prechatForm, businessHours, replyTimeMinutes',
  );

export const usersQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** The `paging.before` cursor (a user id) of the previous page. */
  before: z.coerce.number().int().positive().optional(),
});

/** The place in the list by last activity (conversations/by-activity.ts): `m<message id>` or `u<user id>`. */
const activityCursor = z
  .string()
  .regex(/^[mu][1-9][0-9]{0,15}$/, 'must be the paging.before of the previous page')
  .transform((value): ActivityCursor => ({ kind: value.startsWith('m') ? 'message' : 'user', id: Number(value.slice(1)) }))
  .refine((cursor) => cursor.id <= (cursor.kind === 'user' ? 2_147_483_647 : Number.MAX_SAFE_INTEGER), 'is out of range');

export const conversationsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** The `paging.before` cursor of the previous page. */
  before: activityCursor.optional(),
});

export function activityCursorText(cursor: ActivityCursor): string {
  return `${cursor.kind === 'message' ? 'm' : 'u'}${cursor.id}`;
}

export const accountUserParams = accountIdParams.extend({
  userId: z.coerce.number().int().positive().max(2_147_483_647),
});

const grant = z.object({
  permission: z.string().refine((p) => isPermission(p), 'an unknown permission'),
  accountId: z.number().int().positive().nullable(),
});

export const createOperatorBody = z.object({
  email: z.string().email().max(320),
  password: newPassword,
  grants: z.array(grant).max(100),
});

export const twoFactorLoginBody = z.object({
  challenge: z.string().min(1).max(200),
  /** Six digits from the authenticator, or a recovery code. */
  code: z.string().trim().min(1).max(64),
});

export const passwordResetBody = z.object({ token: z.string().min(1).max(200), password: newPassword });

export const changePasswordBody = z.object({ currentPassword: z.string().min(1).max(1024), newPassword });

export const twoFactorCodeBody = z.object({ code: z.string().trim().min(1).max(64) });

export const sessionIdParams = z.object({ sessionId: z.coerce.number().int().positive().max(2_147_483_647) });

export const grantsBody = z.object({ grants: z.array(grant).max(100) });

export const operatorIdParams = z.object({
  operatorId: z.coerce.number().int().positive(),
});

export const operatorDisabledBody = z.object({ disabled: z.boolean() });

export const operatorSessionParams = operatorIdParams.extend(sessionIdParams.shape);

export const pushKindParams = z.object({
  accountId: z.coerce.number().int().positive(),
  kind: z.enum(['fcm', 'webhook', 'oauth-webhook']),
});

/** FCM signs with RS256: the service account's key is an RSA private key in PEM. */
function isRsaPrivateKey(pem: string): boolean {
  try {
    return createPrivateKey(pem).asymmetricKeyType === 'rsa';
  } catch {
    return false;
  }
}

/** The service-account JSON file as Google hands it out; its other keys are accepted and not kept. */
export const fcmSettingsBody = z
  .object({
    serviceAccount: z.object({
      project_id: z.string().regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, 'must be a Firebase project id'),
      client_email: z.string().email().max(320),
      private_key: z.string().max(16_384).refine(isRsaPrivateKey, 'must be the RSA private key (PEM) of the service account'),
    }),
  })
  .strict();

export const webhookSettingsBody = z.object({ url: webhookUrl }).strict();

export const oauthWebhookSettingsBody = z
  .object({
    url: webhookUrl,
    /** The client-credentials grant is posted here: a customer's address, under the same SSRF rules. */
    tokenUrl: webhookUrl,
    clientId: z.string().min(1).max(512),
    clientSecret: z.string().min(1).max(4096),
    scope: z.string().min(1).max(1024).nullish(),
  })
  .strict();

/** PUT /accounts/{accountId}/push-settings/{kind} as OpenAPI describes it: the body of the kind in the path. */
export const pushSettingsBody = z.union([fcmSettingsBody, webhookSettingsBody, oauthWebhookSettingsBody]);

/** The one-time code a finished single sign-on left in the dashboard's address. */
export const ssoExchangeBody = z.object({
  code: z.string().min(1).max(200),
});

/** What the provider sends back to the callback; the library reads and checks the rest. */
export const ssoCallbackQuery = z.looseObject({
  state: z.string().max(1000).optional(),
});

/** An https address of an image (an operator's avatar, shown to customers). */
const httpsUrl = z
  .string()
  .url()
  .max(2048)
  .refine((u) => /^https:\/\//i.test(u), 'must be an https:// URL');

/** The operator's own profile: what customers see when they answer. */
export const profileBody = z
  .object({
    displayName: z.string().trim().min(1).max(255).nullable().optional(),
    avatarUrl: httpsUrl.nullable().optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, 'give at least one of displayName, avatarUrl');

/** An operator's answer (an agent message, typeId 2): text, an upload of the conversation, or both. */
export const operatorMessageBody = z
  .object({
    message: z.string().trim().min(1).max(RICH_LIMITS.messageLength).optional(),
    media: z.object({ id: z.string().uuid(), description: z.string().max(255).nullish() }).optional(),
  })
  .strict()
  .refine((body) => body.message !== undefined || body.media !== undefined, { message: 'give a message or media', path: ['message'] });

/** The operator typing to the customer (agent typing). */
export const operatorTypingBody = z.object({ isTyping: z.boolean() }).strict();

/** The place in an inbox view (conversations/inbox.ts): `<waiting since, ms or "none">.<user id>`. */
const inboxCursor = z
  .string()
  .regex(/^(none|[0-9]{1,15})\.[1-9][0-9]{0,9}$/, 'must be the paging.after of the previous page')
  .transform((value): InboxCursor => {
    const [waiting = '', user = ''] = value.split('.');
    return { waitingSince: waiting === 'none' ? null : new Date(Number(waiting)), userId: Number(user) };
  })
  .refine((cursor) => cursor.userId <= 2_147_483_647, 'is out of range');

export function inboxCursorText(cursor: InboxCursor): string {
  return `${cursor.waitingSince ? cursor.waitingSince.getTime() : 'none'}.${cursor.userId}`;
}

export const inboxQuery = z.object({
  view: z.enum(['mine', 'unassigned', 'open', 'bots', 'resolved']).default('open'),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** The `paging.after` cursor of the previous page. */
  after: inboxCursor.optional(),
  /** Full-text search (words, all of them): message text, customer identifier, additional information. */
  q: z.string().trim().min(1).max(200).optional(),
});

export const assigneeBody = z
  .object({
    /** An operator's id, or null for nobody. */
    assigneeId: z.number().int().positive().nullable(),
    /** Compare-and-set: the assignee the caller saw (null: nobody). Another one now: 409 assignee_changed. */
    expectedAssigneeId: z.number().int().positive().nullable(),
  })
  .strict();

export const statusBody = z
  .object({
    status: z.enum(['open', 'snoozed', 'resolved']),
    /** With snoozed: until then (else until the customer's next message). */
    snoozedUntil: z.string().datetime({ offset: true }).nullish(),
    /** Compare-and-set, if given: the status the caller saw. Another one now: 409 status_changed. */
    expectedStatus: z.enum(['open', 'snoozed', 'resolved']).optional(),
  })
  .strict()
  .refine((body) => body.status === 'snoozed' || body.snoozedUntil == null, {
    message: 'only a snooze has an end',
    path: ['snoozedUntil'],
  });

export const noteBody = z.object({ text: z.string().trim().min(1).max(RICH_LIMITS.messageLength) }).strict();

export const readBody = z.object({ messageId: z.number().int().positive() }).strict();

export const timelineQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.coerce.number().int().positive().optional(),
});

export const cannedReplyBody = z
  .object({
    /** What follows `/` in the composer. */
    shortcut: z
      .string()
      .trim()
      .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, 'letters, digits, - and _ (at most 64)'),
    text: z.string().trim().min(1).max(RICH_LIMITS.messageLength),
  })
  .strict();

export const cannedReplyChanges = cannedReplyBody
  .partial()
  .strict()
  .refine((body) => Object.keys(body).length > 0, 'give at least one of shortcut, text');

export const cannedReplyParams = accountIdParams.extend({
  replyId: z.coerce.number().int().positive().max(2_147_483_647),
});

/** The audit log's filters (GET /audit and its export): an account, an operator, an action (or a kind: `service`), a time range. */
export const auditFilterQuery = z
  .object({
    accountId: z.coerce.number().int().positive().optional(),
    operatorId: z.coerce.number().int().positive().optional(),
    action: z
      .string()
      .regex(/^[a-z_]+(\.[a-z_]+)?$/, 'an action (service.update) or a kind of them (service)')
      .optional(),
    since: z.string().datetime({ offset: true }).optional(),
    until: z.string().datetime({ offset: true }).optional(),
  })
  .refine((q) => !q.since || !q.until || Date.parse(q.since) < Date.parse(q.until), {
    message: 'until must be after since',
    path: ['until'],
  });

export const auditQuery = auditFilterQuery.safeExtend({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** The `paging.before` cursor of the previous page: the id of its last entry. */
  before: z
    .string()
    .regex(/^[1-9][0-9]{0,18}$/, 'an entry id')
    .optional(),
});
