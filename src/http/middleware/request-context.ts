import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../logger.ts';
import type { AppContextExtras, AppState } from '../types.ts';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * A request id (the caller's if it sent a sane one), the start time and a child logger. The
 * child is made the first time the request logs: most requests log only their access line, and
 * not even that below the info level, so making one for each (pino serialises its bindings) was
 * work for nothing on the hot paths.
 */
export function requestContext(): Middleware<AppState, AppContextExtras> {
  return (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const { logger } = ctx.deps;
    let log: Logger | undefined;
    ctx.state.requestId = requestId;
    ctx.state.startedAt = process.hrtime.bigint();
    Object.defineProperty(ctx.state, 'log', {
      get: () => (log ??= logger.child({ requestId })),
      enumerable: true,
      configurable: true,
    });
    ctx.set('x-request-id', requestId);
    return next();
  };
}
