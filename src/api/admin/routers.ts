// Admin API (DESIGN.md section 4): every route is a declaration (route.ts) in one of the files
// below; this mounts them. Public ones (signing in) first, everything else behind an operator token.
import Router from '@koa/router';
import type { AppContextExtras, AppRouter, AppState } from '../../http/types.ts';
import { accountRoutes } from './accounts.ts';
import { deliveryRoutes } from './deliveries.ts';
import { keyRoutes } from './keys.ts';
import { mediaRoutes } from './media.ts';
import { operatorRoutes } from './operators.ts';
import { pushSettingsRoutes } from './push-settings.ts';
import { userRoutes } from './users.ts';
import { inboxRoutes } from './inbox.ts';
import { handoverRoutes } from './handover.ts';
import { serviceRoutes } from './services.ts';
import { requireOperator } from './operator-access.ts';
import { loginRoutes } from './login.ts';
import { ssoRoutes } from './sso.ts';
import { sessionRoutes } from './session.ts';
import { meRoutes } from './me.ts';
import { signInRoutes } from './sign-in.ts';
import { testEventRoutes } from './test-event.ts';
import { auditRoutes } from './audit.ts';
import { routeName, type AdminRoute } from './route.ts';

/** Every Admin route, in the order the router tries them. */
export const ADMIN_ROUTES: readonly AdminRoute[] = [
  ...loginRoutes,
  ...ssoRoutes,
  ...signInRoutes,
  ...sessionRoutes,
  ...meRoutes,
  ...accountRoutes,
  ...serviceRoutes,
  ...keyRoutes,
  ...testEventRoutes,
  ...userRoutes,
  ...inboxRoutes,
  ...handoverRoutes,
  ...mediaRoutes,
  ...operatorRoutes,
  ...deliveryRoutes,
  ...pushSettingsRoutes,
  ...auditRoutes,
];

/** Routes anyone may call, without a token: signing in (password, the second step, single sign-on) and a reset link's new password. */
export const PUBLIC_ADMIN_ROUTES: readonly string[] = ADMIN_ROUTES.filter((r) => r.rule === 'public').map(routeName);

function mount(router: AppRouter, route: AdminRoute): void {
  const verb = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
  router[verb](route.path, async (ctx) => {
    ctx.state.adminRoute = route;
    await route.handler(ctx);
  });
}

export function adminRouter(): AppRouter {
  const router: AppRouter = new Router<AppState, AppContextExtras>({ prefix: '/adminApi' });
  for (const route of ADMIN_ROUTES.filter((r) => r.rule === 'public')) mount(router, route);
  router.use(requireOperator());
  for (const route of ADMIN_ROUTES.filter((r) => r.rule !== 'public')) mount(router, route);
  return router;
}
