// Liveness, readiness, metrics and the API description: outside every API prefix, no credentials
// (but /metrics asks for `metrics.token` as a bearer token when it is set).
import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import { respond } from '../http/respond.ts';
import { AppError, notFound, unauthorized } from '../errors.ts';
import { openApiDocument } from '../openapi/document.ts';
import type { AppContextExtras, AppRouter, AppState } from '../http/types.ts';

export function healthRouter(): AppRouter {
  const router: AppRouter = new Router<AppState, AppContextExtras>();

  router.get('/healthz', (ctx) => respond(ctx, { data: { status: 'ok' } }));

  router.get('/readyz', async (ctx) => {
    const checks: Record<string, 'ok' | 'down' | 'degraded'> = {};
    try {
      await ctx.deps.db.orm.em.getConnection().execute('select 1');
      checks.database = 'ok';
    } catch (err) {
      ctx.state.log.warn({ err }, 'readiness: database unreachable');
      checks.database = 'down';
    }
    // Redis is an optimisation: without it the node still serves REST and its own sockets (rate
    // limits in memory), so it stays ready, degraded, with the client's connection state.
    const redis = ctx.deps.redis ? { redis: ctx.deps.redis.status } : {};
    if (ctx.deps.redis) {
      checks.redis = ctx.deps.redis.status === 'ready' ? 'ok' : 'degraded';
    }
    if (Object.values(checks).includes('down')) {
      throw new AppError(503, 'not_ready', [], { ...checks, ...redis });
    }
    respond(ctx, { data: { status: 'ready', checks, ...redis } });
  });

  router.get('/metrics', async (ctx) => {
    // metrics.token set: a scraper presents it as a bearer token (compared in constant time).
    // Neither a token nor metrics.open (production's default): as if there were no such route.
    const expected = ctx.deps.config.metrics.token;
    if (expected === undefined && !ctx.deps.config.metrics.open) throw notFound('route_not_found');
    if (expected !== undefined) {
      const match = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'));
      if (!match?.[1]) throw unauthorized('missing_token');
      const digest = (text: string) => createHash('sha256').update(text).digest();
      if (!timingSafeEqual(digest(match[1]), digest(expected))) throw unauthorized('invalid_token');
    }
    ctx.type = ctx.deps.metrics.registry.contentType;
    ctx.body = await ctx.deps.metrics.registry.metrics();
  });

  // Built once: the routes do not change while the server runs.
  const document = openApiDocument();
  router.get('/openapi.json', (ctx) => {
    ctx.body = document;
  });

  return router;
}
