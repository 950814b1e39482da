// The Koa application: one chain for every request, top to bottom:
// request id → access log → error envelope → body parsing → ORM request context → routers
// → unmatched (404 or 405).
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { RequestContext } from '@mikro-orm/core';
import type { AppDeps } from '../deps.ts';
import { adminRouter } from '../routes/admin/index.ts';
import { healthRouter } from '../routes/health.ts';
import { clientRouters } from '../routes/client/index.ts';
import { serviceRouters } from '../routes/service/index.ts';
import { accessLog } from './middleware/access-log.ts';
import { errorHandler } from './middleware/error-handler.ts';
import { requestContext } from './middleware/request-context.ts';
import { unmatched } from './middleware/unmatched.ts';
import type { AppContextExtras, AppRouter, AppState } from './types.ts';

/** Every router of the server, in the order requests try them. */
export function routers(deps: Pick<AppDeps, 'config'>): AppRouter[] {
  return [healthRouter(), adminRouter(), ...clientRouters(deps.config.client), ...serviceRouters(deps.config.client)];
}

export function createApp(deps: AppDeps): Koa<AppState, AppContextExtras> {
  const app = new Koa<AppState, AppContextExtras>({ proxy: true });
  app.context.deps = deps;
  // Errors are answered by errorHandler; Koa's own printing would only duplicate them.
  app.silent = true;

  app.use(requestContext());
  app.use(accessLog());
  app.use(errorHandler());
  app.use(
    koaBody({
      json: true,
      jsonStrict: true,
      jsonLimit: deps.config.http.jsonLimit,
      urlencoded: false,
      text: false,
      multipart: false,
    }),
  );
  // Every request gets its own identity map, so no entity leaks between requests.
  app.use((_ctx, next) => RequestContext.create(deps.db.orm.em, next));

  for (const router of routers(deps)) app.use(router.routes());
  app.use(unmatched());
  return app;
}
