// The Koa application: one chain for every request, top to bottom: client address (only
// trusted proxies' X-Forwarded-For) → request id → access log
// → doubled slashes collapsed → CORS (Client API) → error envelope → body parsing → ORM
// request context → the routers of the path's API prefix → unmatched (404 or 405). CORS sits
// outside the error envelope so that errors carry its headers too, and a browser can read why a
// call failed.
import Koa from 'koa';
import type { AppDeps } from '../deps.ts';
import { adminRouter } from '../api/admin/routers.ts';
import { healthRouter } from '../api/health.ts';
import { dashboardRouter } from '../api/dashboard.ts';
import { clientRouters, isClientApiPath } from '../api/client/routers.ts';
import { serviceRouters } from '../api/service/routers.ts';
import { webRouter } from '../api/web/routers.ts';
import { accessLog } from './middleware/access-log.ts';
import { clientAddress } from './middleware/client-address.ts';
import { jsonBody } from './middleware/body.ts';
import { clientCors } from './middleware/cors.ts';
import { collapseSlashes } from './middleware/slashes.ts';
import { errorHandler } from './middleware/error-handler.ts';
import { requestContext } from './middleware/request-context.ts';
import { ormContext } from './middleware/orm-context.ts';
import { routeByPrefix } from './route-by-prefix.ts';
import { unmatched } from './middleware/unmatched.ts';
import type { AppContextExtras, AppRouter, AppState } from './types.ts';

/** Every router of the server, in the order requests try them. */
export function routers(deps: Pick<AppDeps, 'config'>): AppRouter[] {
  return [
    healthRouter(),
    dashboardRouter(),
    adminRouter(),
    ...clientRouters(deps.config.client),
    ...serviceRouters(deps.config.client),
    webRouter(),
  ];
}

export function createApp(deps: AppDeps): Koa<AppState, AppContextExtras> {
  // X-Forwarded-* are believed only from trusted proxies; ctx.ip is set by clientAddress().
  const app = new Koa<AppState, AppContextExtras>({ proxy: deps.config.trustedProxies.length > 0 });
  app.context.deps = deps;
  // Errors are answered by errorHandler; Koa's own printing would only duplicate them.
  app.silent = true;

  app.use(clientAddress(deps.trustedProxies));
  app.use(requestContext());
  app.use(accessLog());
  app.use(collapseSlashes());
  app.use(clientCors({ maxAgeSeconds: deps.config.client.corsMaxAgeSeconds, isClientPath: isClientApiPath }));
  app.use(errorHandler());
  app.use(jsonBody({ limit: deps.config.http.jsonLimit, isClientPath: isClientApiPath }));
  app.use(ormContext(deps.db.orm.em));

  app.use(routeByPrefix(routers(deps)));
  app.use(unmatched());
  return app;
}
