// The registered-user header, as Parley documents it, so that customers' existing backends
// keep issuing it: base64 of `identification|customerAuthenticationKey|validUntil|verifyHash`:
//   customerAuthenticationKey = hex(HMAC-SHA512(key = the customer's own application secret, identification))
//   verifyHash = hex(HMAC-SHA512(key = the account's authorizationSecret, identification + customerAuthenticationKey + validUntil))
// Palaver cannot recompute the first (it never sees the customer's secret) and needs not: the
// verifyHash, over all three fields, is what proves the header came from the customer's
// backend. It is compared in constant time; the header must not have expired, nor live
// longer than the configured maximum.
//
// The three fields are signed without separators, so the same hash fits any other split of
// the same bytes: `customer-123|3f…` re-read as `customer-12|33f…` would sign in as another
// customer. The split is made unique by the fields' shapes: the key is exactly 128 hex
// characters (what hex(HMAC-SHA512) always is) and validUntil canonical decimal seconds (no
// sign, no leading zero). With the key's length fixed, any other split moves the boundary
// between key and validUntil by as much as the one before it: validUntil loses leading digits
// (a time long past) or gains some from the key (at least 10^10 s, the year 2286, beyond any
// allowed lifetime, which config.ts bounds to a year), and a key digit 0 moved in front of it is
// a leading zero. Every re-split is refused.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.ts';

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

/** hex(HMAC-SHA512(...)): 64 bytes, 128 hex digits, in either case. */
const AUTHENTICATION_KEY = /^[0-9a-fA-F]{128}$/;
/** Unix seconds as decimal digits: no sign, no leading zero, at most 12 digits. */
const CANONICAL_SECONDS = /^[1-9][0-9]{0,11}$/;

/** The account's secrets: the current one, and the one before a rotation while it lasts. */
export interface VerifyingAccount {
  authorizationSecret: string;
  previousAuthorizationSecret?: string | null | undefined;
  previousAuthorizationSecretExpiresAt?: Date | null | undefined;
}

/**
 * What a customer's backend computes. `applicationSecret` is the customer's own (Parley's
 * demo apps use one of their own too); Palaver's tests and demo Service pass any.
 */
export function issueAuthorization(
  account: { authorizationSecret: string },
  identification: string,
  validUntil: number,
  applicationSecret = 'the customer application secret',
): string {
  const key = hmac(applicationSecret, identification);
  const verify = hmac(account.authorizationSecret, `${identification}${key}${validUntil}`);
  return Buffer.from(`${identification}|${key}|${validUntil}|${verify}`, 'utf8').toString('base64');
}

/**
 * Verifies the header against the account; throws 401 invalid_authorization (malformed or
 * forged), authorization_expired, or authorization_too_long (valid further ahead than
 * `maxLifetimeSeconds` from now). An empty header means anonymous: undefined.
 */
export function verifyAuthorization(
  header: string | undefined,
  account: VerifyingAccount,
  options: { maxLifetimeSeconds: number; now?: number },
): RegisteredIdentity | undefined {
  const value = header?.trim().replace(/^Bearer\s+/i, '');
  if (!value) return undefined;
  if (value.length > 4096 || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) throw invalid();
  const parts = Buffer.from(value, 'base64').toString('utf8').split('|');
  // The identification itself may contain '|': the last three fields are fixed.
  if (parts.length < 4) throw invalid();
  const [verify = '', validUntilText = '', key = ''] = parts.splice(-3).reverse();
  const identification = parts.join('|');
  if (!identification || identification.length > 255 || !CANONICAL_SECONDS.test(validUntilText)) throw invalid();
  if (!AUTHENTICATION_KEY.test(key)) throw invalid();
  const now = options.now ?? Date.now();
  const signed = `${identification}${key}${validUntilText}`;
  const previous = account.previousAuthorizationSecretExpiresAt && account.previousAuthorizationSecretExpiresAt.getTime() > now;
  const matches = (secret: string | null | undefined) => !!secret && sameHex(verify.toLowerCase(), hmac(secret, signed));
  // After a rotation the secret before still verifies, until it expires (rotateAuthorizationSecret).
  if (!matches(account.authorizationSecret) && !(previous && matches(account.previousAuthorizationSecret))) throw invalid();
  const validUntil = Number(validUntilText);
  const nowSeconds = now / 1000;
  if (validUntil < nowSeconds) throw new AppError(401, 'authorization_expired');
  if (validUntil - nowSeconds > options.maxLifetimeSeconds) throw new AppError(401, 'authorization_too_long');
  return { identification, validUntil };
}
