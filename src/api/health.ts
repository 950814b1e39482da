// Liveness, readiness, metrics and the API description: outside every API prefix, no credentials.
import Router from '@koa/router';
import { respond } from '../http/respond.ts';
import { AppError } from '../errors.ts';
import { openApiDocument } from '../openapi/document.ts';
import type { AppContextExtras, AppRouter, AppState } from '../http/types.ts';

export function healthRouter(): AppRouter {
  const router: AppRouter = new Router<AppState, AppContextExtras>();

  router.get('/healthz', (ctx) => respond(ctx, { data: { status: 'ok' } }));

  router.get('/readyz', async (ctx) => {
    const checks: Record<string, 'ok' | 'down'> = {};
    try {
      await ctx.deps.db.orm.em.getConnection().execute('select 1');
      checks.database = 'ok';
    } catch (err) {
      ctx.state.log.warn({ err }, 'readiness: database unreachable');
      checks.database = 'down';
    }
    if (ctx.deps.redis) {
      checks.redis = ctx.deps.redis.status === 'ready' ? 'ok' : 'down';
    }
    if (Object.values(checks).includes('down')) {
      throw new AppError(503, 'not_ready', [], checks);
    }
    respond(ctx, { data: { status: 'ready', checks } });
  });

  router.get('/metrics', async (ctx) => {
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
