// Rate limits (per-device writes of the Client API over REST and sockets, admin logins): in
// memory on one node, in Redis when REDIS_URL is set (so every node counts together). If Redis
// fails, an in-memory limiter stands in rather than letting every write through or refusing
// them all.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { tooManyRequests } from './errors.ts';

export interface Limits {
  points: number;
  durationSeconds: number;
}

export function createLimiter(name: string, options: Limits, redis: Redis | undefined): RateLimiterAbstract {
  const limits = { points: options.points, duration: options.durationSeconds, keyPrefix: `palaver:${name}` };
  const memory = new RateLimiterMemory(limits);
  if (!redis) return memory;
  return new RateLimiterRedis({ ...limits, storeClient: redis, insuranceLimiter: memory });
}

/** Takes one point for `key`, or answers 429 too_many_requests with Retry-After. */
export async function consumeOrRefuse(limiter: RateLimiterAbstract, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    throw tooManyRequests(Math.max(1, Math.ceil(err.msBeforeNext / 1000)));
  }
}

/** Writes are counted per device, over REST and sockets alike. */
export function writeLimitKey(accountId: number, deviceId: string): string {
  return `${accountId}:${deviceId}`;
}
