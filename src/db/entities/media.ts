import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** An uploaded file. Its bytes live in media storage under `path`; the row says whose it is. */
export const MediaSchema = defineEntity({
  name: 'Media',
  tableName: 'media',
  properties: (p) => ({
    id: p.uuid().primary(),
    accountId: p.integer(),
    userId: p.integer(),
    /** The device that uploaded it; null for a Service's uploads (and once the device is erased). */
    deviceId: p.integer().nullable(),
    path: p.string(),
    mimeType: p.string(),
    size: p.integer(),
    description: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});

export type Media = InferEntity<typeof MediaSchema>;
