// Service API (docs/service-api.md), under / and /serviceApi/v2.3, for attached backends.
import Router from '@koa/router';
import type { AppContextExtras, AppRouter, AppState } from '../../http/types.ts';
import type { MediaKind } from '../../media/types.ts';
import { accountRoutes } from './account.ts';
import { requireService } from './service-access.ts';
import { deliveryRoutes } from './deliveries.ts';
import { handoverRoutes } from './handover.ts';
import { mediaRoutes } from './media.ts';
import { userRoutes } from './users.ts';

export const SERVICE_PREFIXES = ['', '/serviceApi/v2.3'];

export function serviceRouters(options: { mediaMaxBytes: Readonly<Record<MediaKind, number>> }): AppRouter[] {
  return SERVICE_PREFIXES.map((prefix) => {
    const router: AppRouter = new Router<AppState, AppContextExtras>(prefix ? { prefix } : {});
    const routes: AppRouter = new Router<AppState, AppContextExtras>();
    userRoutes(routes, options.mediaMaxBytes);
    handoverRoutes(routes);
    deliveryRoutes(routes);
    accountRoutes(routes);
    // Under the version prefix only: the unversioned /media/… belongs to the Client API.
    if (prefix) mediaRoutes(routes);
    router.use(requireService(), routes.routes());
    return router;
  });
}
