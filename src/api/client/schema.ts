import { z } from 'zod';

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
