import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { AgentSnapshot } from './user.ts';

/** A message's `typeId`, as clients and Services read it. */
export const MessageType = {
  user: 1,
  agent: 2,
  info: 3,
  /** Signals for Services (user_registered, logged_in, …): never listed to clients. */
  userSystem: 4,
  agentSystem: 5,
} as const;
export type MessageTypeId = (typeof MessageType)[keyof typeof MessageType];

/** A message's `status`: it only rises. */
export const MessageStatusValue = { available: 2, received: 3, seen: 4 } as const;
export type MessageStatus = (typeof MessageStatusValue)[keyof typeof MessageStatusValue];

/** An uploaded file as a message refers to it; `path` is <year>/<month>/<day>/<file>. */
export interface MediaReference {
  path: string;
  mimeType: string;
  description: string | null;
}

/** A button under an agent message, as the Parley clients render it. */
export interface MessageButton {
  title: string;
  /** The URL a `webUrl` opens, the `tel:` URI a `phoneNumber` calls, the text a `reply` sends. */
  payload: string;
  type: 'webUrl' | 'phoneNumber' | 'reply';
}

/** One card of a carousel: a small message of its own (its media is an upload of the conversation). */
export interface CarouselItem {
  message: string | null;
  title: string | null;
  media: MediaReference | null;
  buttons: MessageButton[];
}

/** The rich parts of an agent message (null on a message without any). */
export interface MessageContent {
  title: string | null;
  buttons: MessageButton[];
  quickReplies: string[];
  carousel: CarouselItem[];
}

export const MessageSchema = defineEntity({
  name: 'Message',
  tableName: 'messages',
  properties: (p) => ({
    id: p.bigint('number').primary(),
    userId: p.integer(),
    deviceId: p.integer().nullable(),
    typeId: p.smallint().$type<MessageTypeId>(),
    message: p.text().nullable(),
    media: p.json<MediaReference>().nullable(),
    agent: p.json<AgentSnapshot>().nullable(),
    content: p.json<MessageContent>().nullable(),
    requestUrl: p.text().nullable(),
    /** The sending client's own name for the message, so a retry writes nothing twice (unique per device). */
    clientMessageId: p.string().length(64).nullable(),
    status: p.smallint().$type<MessageStatus>(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});

export type Message = InferEntity<typeof MessageSchema>;
