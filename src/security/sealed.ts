// Small values a browser carries for the server and must neither read nor change (the single
// sign-on attempt's state, nonce and PKCE verifier): AES-256-GCM, so a changed byte fails
// authentication, with an expiry inside the sealed part.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export interface SealingKey {
  readonly key: Buffer;
}

/** A key derived from a secret every node already shares, for one purpose (`label`). */
export function sealingKey(secret: string, label: string): SealingKey {
  return { key: Buffer.from(hkdfSync('sha256', secret, 'palaver', label, 32)) };
}

export function seal(key: SealingKey, value: unknown, ttlSeconds: number): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  const plain = JSON.stringify({ v: value, exp: Date.now() + ttlSeconds * 1000 });
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The sealed value, or null when it was changed, sealed with another key, or has expired. */
export function unseal(key: SealingKey, sealed: string): unknown {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < 29) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    const parsed = JSON.parse(plain) as { v: unknown; exp: number };
    return parsed.exp > Date.now() ? parsed.v : null;
  } catch {
    return null;
  }
}
