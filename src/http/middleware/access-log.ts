import type { Middleware } from 'koa';
import type { AppContextExtras, AppState } from '../types.ts';

type AppMiddleware = Middleware<AppState, AppContextExtras>;

function record(ctx: Parameters<AppMiddleware>[0]): void {
  const seconds = Number(process.hrtime.bigint() - ctx.state.startedAt) / 1e9;
  // The matched route pattern, not the raw path, so ids do not explode label cardinality.
  const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
  ctx.deps.metrics.httpDuration.observe({ method: ctx.method, route, status: String(ctx.status) }, seconds);
  // Asked first: below the info level the request's child logger is not made for a line not written.
  if (ctx.deps.logger.isLevelEnabled('info')) {
    ctx.state.log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(seconds * 1000) }, 'request');
  }
}

/**
 * One log line and one histogram sample per request, after the answer is decided. A then() on
 * the chain's promise rather than an async function around it: one promise a request, not two.
 */
export function accessLog(): AppMiddleware {
  return (ctx, next) =>
    next().then(
      () => record(ctx),
      (err: unknown) => {
        record(ctx);
        throw err;
      },
    );
}
