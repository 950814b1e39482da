// Per-device write limits for the Client API: in memory on one node, in Redis when REDIS_URL
// is set (so every node counts the same device together). If Redis fails, an in-memory
// limiter stands in rather than letting every write through or refusing them all.
import type { Middleware } from 'koa';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config } from '../../config.ts';
import { tooManyRequests } from '../errors.ts';
import type { AppContextExtras, AppState } from '../types.ts';

export function createWriteLimiter(options: Config['client']['rateLimit'], redis: Redis | undefined): RateLimiterAbstract {
  const limits = { points: options.points, duration: options.durationSeconds };
  const memory = new RateLimiterMemory({ ...limits, keyPrefix: 'palaver:writes' });
  if (!redis) return memory;
  return new RateLimiterRedis({ ...limits, storeClient: redis, keyPrefix: 'palaver:writes', insuranceLimiter: memory });
}

/** 429 too_many_requests with Retry-After once the caller's device has used its points. */
export function limitWrites(): Middleware<AppState, AppContextExtras> {
  return async (ctx, next) => {
    const client = ctx.state.client;
    if (client) {
      try {
        await ctx.deps.writeLimiter.consume(`${client.account.id}:${client.deviceId}`);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        throw tooManyRequests(Math.max(1, Math.ceil(err.msBeforeNext / 1000)));
      }
    }
    await next();
  };
}
