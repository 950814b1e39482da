import { createHash, randomBytes, randomInt } from 'node:crypto';

const ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Public, URL-safe identifiers (account and Service `identification`). */
export function alphanumericId(length = 16): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

/** A Standard Webhooks secret: `whsec_` and base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Shared secret with which a customer's backend signs registered-user headers. */
export function newAuthorizationSecret(): string {
  return randomBytes(32).toString('hex');
}

/** A bearer credential: prefix tells its kind, 32 random bytes make it unguessable. */
export function newToken(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/**
 * Tokens and API keys carry 256 random bits, so a plain SHA-256 is a safe way to store
 * them (no dictionary to try) and lets them be looked up by hash in one indexed query.
 */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
