// Client API (DESIGN.md section 2), served the same under / and each /clientApi/v1.x prefix
// that deployed chat clients use.
import Router from '@koa/router';
import type { AppContextExtras, AppRouter, AppState } from '../../http/types.ts';
import { identifyClient } from './auth.ts';
import { deviceRoutes } from './devices.ts';
import { eventRoutes } from './events.ts';
import { mediaRoutes } from './media.ts';
import { messageRoutes } from './messages.ts';

export const CLIENT_PREFIXES = ['', '/clientApi/v1.6', '/clientApi/v1.7', '/clientApi/v1.8', '/clientApi/v1.9'];

export function clientRouters(options: { mediaMaxBytes: number }): AppRouter[] {
  return CLIENT_PREFIXES.map((prefix) => {
    const router: AppRouter = new Router<AppState, AppContextExtras>(prefix ? { prefix } : {});
    const routes: AppRouter = new Router<AppState, AppContextExtras>();
    deviceRoutes(routes);
    messageRoutes(routes);
    eventRoutes(routes);
    mediaRoutes(routes, options.mediaMaxBytes);
    // Identification runs for these routes only, not for every path under the prefix.
    router.use(identifyClient(), routes.routes());
    return router;
  });
}
