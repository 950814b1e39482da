import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { AgentSnapshot } from './user.ts';

/** 1 user, 2 agent, 3 info, 4 user system, 5 agent system. */
export type MessageTypeId = 1 | 2 | 3 | 4 | 5;
/** 2 available, 3 received, 4 seen. */
export type MessageStatus = 2 | 3 | 4;

/** An uploaded file as a message refers to it; `path` is <year>/<month>/<day>/<file>. */
export interface MediaReference {
  path: string;
  mimeType: string;
  description: string | null;
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
    requestUrl: p.text().nullable(),
    status: p.smallint().$type<MessageStatus>(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});

export type Message = InferEntity<typeof MessageSchema>;
