// Rate limits (per-device writes of the Client API over REST and sockets, admin logins): in
// memory on one node, in Redis when REDIS_URL is set (so every node counts together). If Redis
// fails, an in-memory limiter of this node stands in rather than letting every write through or
// refusing them all.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { tooManyRequests } from './errors.ts';

export interface Limits {
  points: number;
  durationSeconds: number;
}

/** The insurance of a Redis limiter: rate-limiter-flexible calls it only when Redis failed. */
class FallbackMemoryLimiter extends RateLimiterMemory {
  constructor(
    options: ConstructorParameters<typeof RateLimiterMemory>[0],
    private readonly onFallback: () => void,
  ) {
    super(options);
  }

  override consume(...args: Parameters<RateLimiterMemory['consume']>): Promise<RateLimiterRes> {
    this.onFallback();
    return super.consume(...args);
  }
}

/**
 * With Redis, every call Redis cannot answer (down, reconnecting, a command that failed) is
 * answered from this node's memory instead, at once while the client is not ready: it never
 * rejects for Redis's sake, and `onFallback` hears of each such call.
 */
export function createLimiter(
  name: string,
  options: Limits,
  redis: Redis | undefined,
  onFallback: (limiter: string) => void = () => undefined,
  namespace = 'palaver',
): RateLimiterAbstract {
  const limits = { points: options.points, duration: options.durationSeconds, keyPrefix: `${namespace}:${name}` };
  if (!redis) return new RateLimiterMemory(limits);
  const memory = new FallbackMemoryLimiter(limits, () => onFallback(name));
  return new RateLimiterRedis({ ...limits, storeClient: redis, insuranceLimiter: memory, rejectIfRedisNotReady: true });
}

/**
 * The keys' namespace in Redis: `palaver:` and the database's name. Counts are kept per record id
 * (an operator, a user), and ids only mean something within one database: deployments (or test
 * databases) that share a Redis never count against each other.
 */
export function limitsNamespace(databaseUrl: string | undefined): string {
  const name = databaseUrl ? decodeURIComponent(new URL(databaseUrl).pathname.slice(1)) : '';
  return `palaver:${name || 'embedded'}`;
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

/**
 * One write of the Client API: a point of the client address (every device and account behind
 * it together, so fresh devices do not buy fresh points) and one of the device.
 */
export async function consumeWrite(
  limiters: { addressWriteLimiter: RateLimiterAbstract; writeLimiter: RateLimiterAbstract },
  deviceKey: string,
  address: string,
): Promise<void> {
  await consumeOrRefuse(limiters.addressWriteLimiter, address);
  await consumeOrRefuse(limiters.writeLimiter, deviceKey);
}

/** Points taken by consumeEachOrRefuse(): given back when what they counted turns out not to count. */
export interface Taken {
  giveBack(): Promise<void>;
}

/**
 * Takes one point of each limiter for its key, in order. Refused by one, gives back what the
 * ones before it took (the call was not tried, so it counts for none) and answers 429 with the
 * refusing limiter's Retry-After.
 */
export async function consumeEachOrRefuse(counts: ReadonlyArray<readonly [RateLimiterAbstract, string]>): Promise<Taken> {
  const taken: Array<readonly [RateLimiterAbstract, string]> = [];
  const giveBack = async () => {
    await Promise.all(taken.splice(0).map(([limiter, key]) => limiter.reward(key, 1)));
  };
  for (const count of counts) {
    try {
      await consumeOrRefuse(...count);
    } catch (err) {
      await giveBack();
      throw err;
    }
    taken.push(count);
  }
  return { giveBack };
}
