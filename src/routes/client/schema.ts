import { z } from 'zod';

/** Page addresses are kept as sent, however long their tracking query strings get, up to this. */
export const MAX_REFERER_LENGTH = 8192;

/**
 * The page a client is on (`referer`, or `referrer` as the mobile libraries spell it) is
 * metadata: any non-empty text up to the bound is kept as sent (NUL bytes, which no database
 * text takes, dropped); anything else is ignored, never a reason to refuse a call.
 */
const referer = z
  .string()
  .min(1)
  .max(MAX_REFERER_LENGTH)
  .transform((value) => value.replaceAll('\u0000', '') || undefined)
  .optional()
  .catch(undefined);

export const deviceBody = z
  .object({
    pushToken: z.string().max(4096).nullish(),
    pushType: z.number().int().min(1).max(6).nullish(),
    pushEnabled: z.boolean().optional(),
    userAdditionalInformation: z.record(z.string(), z.unknown()).optional(),
    type: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4)]).optional(),
    version: z.string().max(64).optional(),
    referer,
    referrer: referer,
  })
  .refine((b) => JSON.stringify(b.userAdditionalInformation ?? {}).length <= 16_384, {
    message: 'at most 16 kB of JSON',
    path: ['userAdditionalInformation'],
  });

/** The texts a client may send as a user system message (typeId 4). */
export const CLIENT_SYSTEM_MESSAGES = ['logged_in', 'deleted_conversation'] as const;

export const MAX_MESSAGE_LENGTH = 5000;

export const messageBody = z
  .object({
    message: z.string().trim().min(1).max(MAX_MESSAGE_LENGTH).optional(),
    media: z.object({ id: z.string().uuid(), description: z.string().max(255).nullish() }).optional(),
    typeId: z.union([z.literal(1), z.literal(4)], { message: 'a client may send typeId 1 or 4 only' }).optional(),
    referer,
    referrer: referer,
  })
  .superRefine((body, ctx) => {
    if ((body.message === undefined) === (body.media === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['message'], message: 'give either message or media' });
    }
    if (body.typeId === 4 && !CLIENT_SYSTEM_MESSAGES.includes(body.message as (typeof CLIENT_SYSTEM_MESSAGES)[number])) {
      ctx.addIssue({ code: 'custom', path: ['message'], message: `typeId 4 takes ${CLIENT_SYSTEM_MESSAGES.join(' or ')}` });
    }
  });

/** `/messages/{id}`, `/messages/before:{id}`, `/messages/after:{id}`. */
export const messageCursorParams = z.object({
  cursor: z.string().regex(/^(?:(before|after):)?[1-9]\d{0,15}$/, 'an id, before:<id> or after:<id>'),
});

export const statusParams = z.object({
  status: z.coerce.number().pipe(z.union([z.literal(2), z.literal(3), z.literal(4)])),
});

export const statusBody = z.object({
  messageIds: z.array(z.number().int().positive()).min(1).max(500),
});

/** The event calls' names, as clients send them, and the Event payload name each causes. */
export const EVENT_NAMES = { startTyping: 'startTyping', stopTyping: 'stopTyping', ChatOpened: 'chatOpened' } as const;

export const eventParams = z.object({
  name: z.enum(['startTyping', 'stopTyping', 'ChatOpened']),
});

export const mediaParams = z.object({
  year: z.string().regex(/^\d{4}$/),
  month: z.string().regex(/^\d{1,2}$/),
  day: z.string().regex(/^\d{1,2}$/),
  file: z.string().regex(/^[0-9a-f-]{36}\.[a-z0-9]{2,4}$/),
});
