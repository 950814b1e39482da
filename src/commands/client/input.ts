// What chat clients send in, checked the same for every transport (REST bodies, socket
// events): devices, messages, and the page address that becomes a message's requestUrl.
import { z } from 'zod';

/** Page addresses are kept as sent, however long their tracking query strings get, up to this. */
export const MAX_REFERER_LENGTH = 8192;

/**
 * The page a client is on (`referer`, or `referrer` as the mobile libraries spell it) is
 * metadata: any non-empty text up to the bound is kept as sent (NUL bytes, which no database
 * text takes, dropped, and lone surrogates made U+FFFD, so check() finds nothing unstorable in
 * it); anything else is ignored, never a reason to refuse a call.
 */
const LONE_SURROGATES = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const referer = z
  .string()
  .min(1)
  .max(MAX_REFERER_LENGTH)
  .transform((value) => value.replaceAll('\u0000', '').replace(LONE_SURROGATES, '\ufffd') || undefined)
  .optional()
  .catch(undefined);

const MAX_JSON_DEPTH = 32;

/** How deep arrays and objects nest in a parsed JSON value; iterative, so deep input cannot overflow it. */
function jsonDepth(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [current, depth] = item;
    if (typeof current !== 'object' || current === null) continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return deepest;
}

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
  })
  // 16 kB of `[[[…]]]` is thousands of levels deep: stored, it would overflow the stack of
  // every later load of the user through the ORM (which walks JSON recursively).
  .refine((b) => jsonDepth(b.userAdditionalInformation ?? {}) <= MAX_JSON_DEPTH, {
    message: `at most ${MAX_JSON_DEPTH} levels of nesting`,
    path: ['userAdditionalInformation'],
  });

export const MAX_MESSAGE_LENGTH = 5000;

export const messageBody = z
  .object({
    message: z.string().trim().min(1).max(MAX_MESSAGE_LENGTH).optional(),
    media: z.object({ id: z.string().uuid(), description: z.string().max(255).nullish() }).optional(),
    /**
     * 4: a user system message: the web library's `logged_in` and `deleted_conversation`, or an
     * app's silent message (Android's `send(text, silent = true)`) with any text. Delivered to
     * the Service with typeId 4 and, like every user system message, not listed to clients.
     */
    typeId: z.union([z.literal(1), z.literal(4)], { message: 'a client may send typeId 1 or 4 only' }).optional(),
    /**
     * The client's own name for this message (Palaver's widget sends one; the Parley clients do
     * not): sending the same id again from the same device writes nothing and answers the
     * message written the first time, so a client may retry whenever it did not hear the answer.
     */
    clientMessageId: z
      .string()
      .regex(/^[A-Za-z0-9_-]{8,64}$/, '8 to 64 letters, digits, - or _')
      .optional(),
    referer,
    referrer: referer,
  })
  .superRefine((body, ctx) => {
    if ((body.message === undefined) === (body.media === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['message'], message: 'give either message or media' });
    }
    if (body.typeId === 4 && body.media !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['typeId'], message: 'a user system message is text' });
    }
    // The server's own signal that a customer was first seen: no client may send it.
    if (body.typeId === 4 && body.message === 'user_registered') {
      ctx.addIssue({ code: 'custom', path: ['message'], message: 'user_registered is sent by the server only' });
    }
  });

export type DeviceBody = z.output<typeof deviceBody>;
export type MessageBody = z.output<typeof messageBody>;

/** `referer` (or `referrer`) from the body, else the transport's Referer header, as sent. */
export function pageAddress(
  body: { referer?: string | undefined; referrer?: string | undefined },
  refererHeader: string | undefined,
): string | null {
  const header = refererHeader?.replaceAll('\u0000', '');
  return body.referer ?? body.referrer ?? (header && header.length <= MAX_REFERER_LENGTH ? header : null);
}
