import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { AppContextExtras, AppState } from '../types.ts';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** A request id (the caller's if it sent a sane one), the start time and a child logger. */
export function requestContext(): Middleware<AppState, AppContextExtras> {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.startedAt = process.hrtime.bigint();
    ctx.state.log = ctx.deps.logger.child({ requestId });
    ctx.set('x-request-id', requestId);
    await next();
  };
}
