import { z } from 'zod';
import { createPrivateKey } from 'node:crypto';
import type { ActivityCursor } from '../../conversations/by-activity.ts';
import { isPermission } from '../../tenancy/permissions.ts';

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
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, 'give at least one of name, webhookUrl, enabled');

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
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, 'give at least one of name, welcomeMessage, stickyMessage, allowedOrigins');

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
  password: z.string().min(8).max(1024),
  grants: z.array(grant).max(100),
});

export const grantsBody = z.object({ grants: z.array(grant).max(100) });

export const operatorIdParams = z.object({
  operatorId: z.coerce.number().int().positive(),
});

export const operatorDisabledBody = z.object({ disabled: z.boolean() });

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
