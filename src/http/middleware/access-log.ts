import type { Middleware } from 'koa';
import type { AppContextExtras, AppState } from '../types.ts';

/** One log line and one histogram sample per request, after the answer is decided. */
export function accessLog(): Middleware<AppState, AppContextExtras> {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - ctx.state.startedAt) / 1e9;
      // The matched route pattern, not the raw path, so ids do not explode label cardinality.
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      ctx.deps.metrics.httpDuration.observe({ method: ctx.method, route, status: String(ctx.status) }, seconds);
      ctx.state.log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(seconds * 1000) }, 'request');
    }
  };
}
