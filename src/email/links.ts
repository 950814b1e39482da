// Links in emails that need no login: a file of the conversation (expiring), the unsubscribe
// link, and the way back to the conversation. Each is a token signed with HMAC-SHA-256 under
// `email.linkSecret`, so that nobody can make one for another file or another customer; the
// token names the account and user, and the file's path, never the message text.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export type LinkClaims =
  /** A file of the user's conversation, until `exp` (seconds since the epoch). */
  | { k: 'media'; a: number; u: number; p: string; exp: number }
  /** Stop answers by email to this user of this account. Never expires: an old email must still work. */
  | { k: 'unsubscribe'; a: number; u: number }
  /**
   * The conversation, for the widget on the page where the customer chatted, until `exp`; `e`
   * is a digest of the address the email went to (the link stops working when it changes).
   */
  | { k: 'conversation'; a: number; u: number; e: string; exp: number };

/** The digest of an address a conversation link names: the first 16 hex digits of its SHA-256. */
export function addressDigest(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 16);
}

function mac(secret: string, body: string): Buffer {
  return createHmac('sha256', secret).update(body).digest();
}

export function signLink(secret: string, claims: LinkClaims): string {
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${body}.${mac(secret, body).toString('base64url')}`;
}

/** The claims of a token signed with `secret`, of the wanted kind and not expired; null otherwise. */
export function verifyLink<K extends LinkClaims['k']>(
  secret: string,
  token: string,
  kind: K,
  now = Date.now(),
): Extract<LinkClaims, { k: K }> | null {
  const [body, signature, extra] = token.split('.');
  if (!body || !signature || extra !== undefined) return null;
  const expected = mac(secret, body);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof claims !== 'object' || claims === null || (claims as { k?: unknown }).k !== kind) return null;
  const exp = (claims as { exp?: unknown }).exp;
  if (exp !== undefined && (typeof exp !== 'number' || exp * 1000 < now)) return null;
  return claims as Extract<LinkClaims, { k: K }>;
}
