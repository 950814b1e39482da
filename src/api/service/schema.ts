import { z } from 'zod';
import { validationFailed } from '../../errors.ts';

export const userIdParams = z.object({
  userId: z.coerce.number().int().positive().max(2_147_483_647),
});

export const ownerBody = z.object({
  serviceIdentification: z.string().min(1).max(64),
});

/** A handover step's reason and metadata (docs/service-api.md): bounded, so they fit a changeOwner payload. */
export const HANDOVER_LIMITS = { reason: 500, metadataBytes: 4096, minTimeoutSeconds: 10, maxTimeoutSeconds: 86_400 };

const handoverNote = {
  reason: z.string().trim().min(1).max(HANDOVER_LIMITS.reason).nullish(),
  metadata: z
    .record(z.string(), z.unknown())
    .refine((value) => Buffer.byteLength(JSON.stringify(value)) <= HANDOVER_LIMITS.metadataBytes, {
      message: `metadata is a JSON object of at most ${HANDOVER_LIMITS.metadataBytes} bytes`,
    })
    .nullish(),
};

export const releaseBody = z.object(handoverNote).strict();
export const acceptBody = releaseBody;
export const passBody = z.object({ ...handoverNote, serviceIdentification: z.string().min(1).max(64).nullish() }).strict();
export const offerBody = z
  .object({
    ...handoverNote,
    serviceIdentification: z.string().min(1).max(64).nullish(),
    timeoutSeconds: z.number().int().min(HANDOVER_LIMITS.minTimeoutSeconds).max(HANDOVER_LIMITS.maxTimeoutSeconds).nullish(),
  })
  .strict();

/** What an avatar may be: an absolute http(s) URL; whether plain http is allowed depends on the server (refuseHttpAvatar). */
const AVATAR_RULE = 'an avatar is an absolute https URL (http too where private webhook addresses are allowed)';

export const agentSchema = z.object({
  id: z.number().int().positive(),
  name: z.string().trim().min(1).max(255),
  // Sent on to every client as an image address: a javascript:, data: or vbscript: URL would be
  // script or content of the Service's making in whatever client renders it carelessly.
  avatar: z
    .string()
    .max(2048)
    .refine((value) => /^https?:\/\//i.test(value) && isHttpUrl(value), AVATAR_RULE)
    .nullish(),
});

/**
 * Plain http avatars only where private webhook addresses are allowed (development, the tests):
 * elsewhere an avatar is https, as the pages showing it are.
 */
export function refuseHttpAvatar(agent: { avatar?: string | null | undefined }, allowHttp: boolean): void {
  if (allowHttp || !agent.avatar || new URL(agent.avatar).protocol === 'https:') return;
  throw validationFailed([{ field: 'body.agent.avatar', detail: 'an avatar is an https URL' }]);
}

/** Bounds of the rich parts of an agent message. */
export const RICH_LIMITS = {
  buttons: 10,
  quickReplies: 10,
  quickReplyLength: 100,
  carouselItems: 10,
  titleLength: 255,
  payloadLength: 2048,
  messageLength: 5000,
} as const;

/** An http or https URL (what a `webUrl` button opens). */
function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * A `tel:` URI (RFC 3966) of a number: `tel:+31612345678`, with visual separators (`-`, `.`,
 * `(`, `)`) allowed; `tel://+31…`, as the reference bodies write it, too.
 */
const TEL_URI = /^tel:(?:\/\/)?\+?[0-9().-]*[0-9][0-9().-]*$/;

const title = z.string().trim().min(1).max(RICH_LIMITS.titleLength);
const text = z.string().trim().min(1).max(RICH_LIMITS.messageLength);

/** An upload of the conversation (POST /users/{userId}/media). */
const mediaRef = z.object({ id: z.string().uuid(), description: z.string().max(255).nullish() });

const buttonTitle = z.string().trim().min(1).max(RICH_LIMITS.titleLength);
const payload = z.string().trim().min(1).max(RICH_LIMITS.payloadLength);

export const messageButton = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('webUrl'),
    title: buttonTitle,
    payload: payload.refine(isHttpUrl, 'a webUrl payload is an http or https URL'),
  }),
  z.object({
    type: z.literal('phoneNumber'),
    title: buttonTitle,
    payload: payload.regex(TEL_URI, 'a phoneNumber payload is a tel: URI, e.g. tel:+31612345678'),
  }),
  z.object({ type: z.literal('reply'), title: buttonTitle, payload }),
]);

const buttons = z.array(messageButton).max(RICH_LIMITS.buttons);

export const carouselItem = z
  .object({
    message: text.nullish(),
    title: title.nullish(),
    media: mediaRef.nullish(),
    buttons: buttons.nullish(),
  })
  .refine((item) => item.message != null || item.title != null || item.media != null || (item.buttons?.length ?? 0) > 0, {
    message: 'a carousel item needs a message, title, media or buttons',
    path: ['message'],
  });

export const agentMessageBody = z
  .object({
    message: text.optional(),
    /** An upload of the conversation (POST /users/{userId}/media): an image, or any other file. */
    media: mediaRef.optional(),
    title: title.nullish(),
    buttons: buttons.nullish(),
    quickReplies: z.array(z.string().trim().min(1).max(RICH_LIMITS.quickReplyLength)).max(RICH_LIMITS.quickReplies).nullish(),
    carousel: z.array(carouselItem).max(RICH_LIMITS.carouselItems).nullish(),
    agent: agentSchema,
    typeId: z.union([z.literal(2), z.literal(5)]).default(2),
  })
  .refine(
    (body) =>
      body.message !== undefined ||
      body.media !== undefined ||
      body.title != null ||
      (body.buttons?.length ?? 0) > 0 ||
      (body.carousel?.length ?? 0) > 0,
    { message: 'give a message, media, title, buttons or a carousel', path: ['message'] },
  );

export type AgentMessageBody = z.output<typeof agentMessageBody>;

export const serviceMessagesQuery = z.object({
  before: z.coerce.number().int().positive().optional(),
  after: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const typingBody = z.object({
  isTyping: z.boolean(),
  agent: agentSchema,
});

/** `GET /serviceApi/v2.3/media/<ref>`, where `{{img/<ref>}}` is what the message payload carried. */
export const serviceMediaParams = z.object({
  accountId: z.coerce.number().int().positive().max(2_147_483_647),
  year: z.string().regex(/^\d{4}$/),
  month: z.string().regex(/^\d{1,2}$/),
  day: z.string().regex(/^\d{1,2}$/),
  file: z.string().regex(/^[0-9a-f-]{36}\.[a-z0-9]{2,4}$/),
});
