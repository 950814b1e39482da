// Operator passwords: scrypt from node:crypto (memory-hard, no native add-on to build).
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** log2 of scrypt's N in production; config.ts refuses less there (`security.passwordHashCost`). */
export const DEFAULT_HASH_COST = 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 64;

/** scrypt needs about 128·N·r bytes; twice that leaves room without allowing any cost at all. */
function maxmemFor(n: number, r: number): number {
  return Math.max(64 * 1024 * 1024, 256 * n * r);
}

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Format: scrypt$N$r$p$salt$hash (base64), so the cost can change without a migration. */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const N = 2 ** cost;
  const key = await derive(password, salt, { N, r: R, p: P, maxmem: maxmemFor(N, R) });
  return ['scrypt', N, R, P, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await derive(password, Buffer.from(salt, 'base64'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: maxmemFor(Number(n), Number(r)),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** True when a stored hash was made with other parameters than `cost` asks for: rehash it at the next sign-in. */
export function needsRehash(stored: string, cost: number): boolean {
  const [scheme, n, r, p] = stored.split('$');
  return scheme !== 'scrypt' || Number(n) !== 2 ** cost || Number(r) !== R || Number(p) !== P;
}

const dummies = new Map<number, Promise<string>>();

/** Verifying against this when no operator matches keeps unknown emails as slow as wrong passwords. */
export function dummyPasswordHash(cost: number): Promise<string> {
  let dummy = dummies.get(cost);
  if (!dummy) {
    dummy = hashPassword(randomBytes(16).toString('hex'), cost);
    dummies.set(cost, dummy);
  }
  return dummy;
}
