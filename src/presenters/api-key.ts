import type { ServiceApiKey } from '../db/entities/index.ts';

/** A Service API key without its secret part: the prefix tells keys apart. */
export function presentApiKey(key: ServiceApiKey) {
  return {
    id: key.id,
    prefix: key.prefix,
    createdAt: key.createdAt.toISOString(),
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}
