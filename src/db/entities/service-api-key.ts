import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** Only the SHA-256 of a key is kept; `prefix` lets an operator tell keys apart. */
export const ServiceApiKeySchema = defineEntity({
  name: 'ServiceApiKey',
  tableName: 'service_api_keys',
  properties: (p) => ({
    id: p.integer().primary(),
    serviceId: p.integer(),
    keyHash: p.string().unique(),
    prefix: p.string(),
    createdAt: p.datetime().onCreate(() => new Date()),
    revokedAt: p.datetime().nullable(),
  }),
});

export type ServiceApiKey = InferEntity<typeof ServiceApiKeySchema>;
