// The registered-user header (DESIGN.md section 2), so that customers' existing backends can
// issue it: base64 of `identification|customerAuthenticationKey|validUntil|verifyHash` with
//   customerAuthenticationKey = hex(HMAC-SHA512(key = accountIdentification, identification))
//   verifyHash = hex(HMAC-SHA512(key = authorizationSecret, identification + key + validUntil))
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../http/errors.ts';

export interface RegisteredIdentity {
  /** Becomes the user's uniqueIdentifier. */
  identification: string;
  validUntil: number;
}

const hmac = (key: string, data: string) => createHmac('sha512', key).update(data).digest('hex');

function sameHex(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

const invalid = () => new AppError(401, 'invalid_authorization');

/** What a customer's backend computes; Palaver's tests and demo Service use it too. */
export function issueAuthorization(
  account: { identification: string; authorizationSecret: string },
  identification: string,
  validUntil: number,
): string {
  const key = hmac(account.identification, identification);
  const verify = hmac(account.authorizationSecret, `${identification}${key}${validUntil}`);
  return Buffer.from(`${identification}|${key}|${validUntil}|${verify}`, 'utf8').toString('base64');
}

/**
 * Verifies the header against the account; throws 401 invalid_authorization (malformed or
 * forged) or 401 authorization_expired. An empty header means anonymous: undefined.
 */
export function verifyAuthorization(
  header: string | undefined,
  account: { identification: string; authorizationSecret: string },
  now = Date.now(),
): RegisteredIdentity | undefined {
  const value = header?.trim().replace(/^Bearer\s+/i, '');
  if (!value) return undefined;
  if (value.length > 4096 || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) throw invalid();
  const parts = Buffer.from(value, 'base64').toString('utf8').split('|');
  // The identification itself may contain '|': the last three fields are fixed.
  if (parts.length < 4) throw invalid();
  const [verify = '', validUntilText = '', key = ''] = parts.splice(-3).reverse();
  const identification = parts.join('|');
  if (!identification || identification.length > 255 || !/^\d{1,12}$/.test(validUntilText)) throw invalid();
  const validUntil = Number(validUntilText);
  const keyOk = sameHex(key, hmac(account.identification, identification));
  const verifyOk = sameHex(verify, hmac(account.authorizationSecret, `${identification}${key}${validUntilText}`));
  if (!keyOk || !verifyOk) throw invalid();
  if (validUntil * 1000 < now) throw new AppError(401, 'authorization_expired');
  return { identification, validUntil };
}
