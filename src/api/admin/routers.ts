// Admin API (docs/architecture.md): every route is a declaration (route.ts) in one of the files
// below; this mounts them. Public ones (signing in) first, everything else behind an operator token.
// Before a handler runs, its rule is checked and its input validated (input()).
import Router from '@koa/router';
import type { AppContext, AppContextExtras, AppRouter, AppState } from '../../http/types.ts';
import { parseBody, parseParams, parseQuery } from '../../http/validate.ts';
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
import { authorize, requireOperator } from './operator-access.ts';
import { loginRoutes } from './login.ts';
import { ssoRoutes } from './sso.ts';
import { sessionRoutes } from './session.ts';
import { meRoutes } from './me.ts';
import { signInRoutes } from './sign-in.ts';
import { testEventRoutes } from './test-event.ts';
import { auditRoutes } from './audit.ts';
import { routeName, type AdminInput, type AdminRoute } from './route.ts';

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

/**
 * The route's input, read in the order its refusals come: what switches the route off; the
 * rule where it needs nothing of the path (everywhere, session); the record a `record` route
 * names; the params, then the rule on the path's account; the query; the body. A `listing`
 * route's handler asks for the accounts it may list (authorizeListing()).
 */
async function input(ctx: AppContext, route: AdminRoute): Promise<AdminInput> {
  route.guard?.(ctx);
  const scope = route.rule === 'public' ? 'public' : route.rule.scope;
  if (scope === 'everywhere' || scope === 'session') authorize(ctx);
  const record = await route.record?.(ctx);
  const params = route.params && parseParams(ctx, route.params);
  if (scope === 'account') authorize(ctx, accountOf(route, params));
  const query = route.query && parseQuery(ctx, route.query);
  const body = route.body && parseBody(ctx, route.body);
  return { params, query, body, record };
}

function accountOf(route: AdminRoute, params: Record<string, unknown> | undefined): number {
  const accountId = params?.accountId;
  if (typeof accountId !== 'number') throw new Error(`${routeName(route)} needs the account of its path`);
  return accountId;
}

function mount(router: AppRouter, route: AdminRoute): void {
  if (route.rule !== 'public' && route.rule.scope === 'record' && !route.record) {
    throw new Error(`${routeName(route)} names a record: it declares how the record is loaded`);
  }
  const verb = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
  router[verb](route.path, async (ctx) => {
    ctx.state.adminRoute = route;
    await route.handler(ctx, await input(ctx, route));
  });
}

export function adminRouter(): AppRouter {
  const router: AppRouter = new Router<AppState, AppContextExtras>({ prefix: '/adminApi' });
  for (const route of ADMIN_ROUTES.filter((r) => r.rule === 'public')) mount(router, route);
  router.use(requireOperator());
  for (const route of ADMIN_ROUTES.filter((r) => r.rule !== 'public')) mount(router, route);
  return router;
}
