// The Reply-To of emails: `reply+<token>@<email.inbound.domain>`, where the token names the
// account and the user and is signed (HMAC-SHA-256 under `email.inbound.secret`), so a reply
// lands in the conversation it answers and a made-up or altered address is refused at RCPT.
// The token is lowercase letters, digits and dashes, 40-odd characters: mail systems may fold
// the case of a local part and limit it to 64 characters (RFC 5321). It names the key it was
// signed with (a short id derived from the secret), so a rotated-out secret still verifies the
// addresses of emails sent before the rotation while it is kept as `previousSecret`.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface ReplyClaims {
  accountId: number;
  userId: number;
}

export interface ReplyKeys {
  secret: string;
  previousSecret?: string | undefined;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** RFC 4648 base32, lowercase, unpadded. */
function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** Which secret signed a token: two characters, derived from the secret, never revealing it. */
function keyId(secret: string): string {
  return base32(createHash('sha256').update(`palaver reply key\0${secret}`).digest()).slice(0, 2);
}

/** 128 bits of HMAC over what the token names, its key id included. */
function mac(secret: string, body: string): string {
  return base32(createHmac('sha256', secret).update(`reply\0${body}`).digest().subarray(0, 16));
}

export function replyToken(secret: string, claims: ReplyClaims): string {
  const body = `${claims.accountId.toString(36)}-${claims.userId.toString(36)}-${keyId(secret)}`;
  return `${body}-${mac(secret, body)}`;
}

export function replyAddress(keys: ReplyKeys & { domain: string }, claims: ReplyClaims): string {
  return `reply+${replyToken(keys.secret, claims)}@${keys.domain}`;
}

/**
 * The account and user of a reply address at `domain` whose signature verifies under the current
 * or the previous secret; null for anything else (another domain, another shape, a forgery).
 */
export function verifyReplyAddress(address: string, keys: ReplyKeys & { domain: string }): ReplyClaims | null {
  const at = address.lastIndexOf('@');
  if (at < 0 || address.slice(at + 1).toLowerCase() !== keys.domain.toLowerCase()) return null;
  const match = /^reply\+([0-9a-z]{1,13})-([0-9a-z]{1,13})-([a-z2-7]{2})-([a-z2-7]{26})$/.exec(address.slice(0, at).toLowerCase());
  if (!match) return null;
  const [, account, user, kid, signature] = match as unknown as [string, string, string, string, string];
  const secret = [keys.secret, keys.previousSecret].find((s) => s !== undefined && keyId(s) === kid);
  if (!secret) return null;
  const expected = Buffer.from(mac(secret, `${account}-${user}-${kid}`));
  if (!timingSafeEqual(expected, Buffer.from(signature))) return null;
  const accountId = parseInt(account, 36);
  const userId = parseInt(user, 36);
  if (!Number.isSafeInteger(accountId) || !Number.isSafeInteger(userId) || accountId <= 0 || userId <= 0) return null;
  return { accountId, userId };
}
