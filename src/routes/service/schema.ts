import { z } from 'zod';

export const userIdParams = z.object({
  userId: z.coerce.number().int().positive().max(2_147_483_647),
});

export const ownerBody = z.object({
  serviceIdentification: z.string().min(1).max(64),
});

export const agentSchema = z.object({
  id: z.number().int().positive(),
  name: z.string().trim().min(1).max(255),
  avatar: z.string().url().max(2048).nullish(),
});

export const agentMessageBody = z
  .object({
    message: z.string().trim().min(1).max(5000).optional(),
    /** An image uploaded to the conversation with POST /users/{userId}/media. */
    media: z.object({ id: z.string().uuid(), description: z.string().max(255).nullish() }).optional(),
    agent: agentSchema,
    typeId: z.union([z.literal(2), z.literal(5)]).default(2),
  })
  .refine((body) => (body.message === undefined) !== (body.media === undefined), {
    message: 'give either message or media',
    path: ['message'],
  });

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
