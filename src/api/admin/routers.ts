// Admin API (DESIGN.md section 4): login and single sign-on (PUBLIC_ADMIN_ROUTES) are open, everything else needs an operator token.
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
import { requireOperator } from './auth.ts';
import { loginRoutes } from './login.ts';
import { ssoRoutes } from './sso.ts';
import { sessionRoutes } from './session.ts';
import { meRoutes } from './me.ts';
import { signInRoutes } from './sign-in.ts';
import { testEventRoutes } from './test-event.ts';

export function adminRouter(): AppRouter {
  const router: AppRouter = new Router<AppState, AppContextExtras>({ prefix: '/adminApi' });
  loginRoutes(router);
  ssoRoutes(router);
  signInRoutes(router);
  router.use(requireOperator());
  sessionRoutes(router);
  meRoutes(router);
  accountRoutes(router);
  serviceRoutes(router);
  keyRoutes(router);
  testEventRoutes(router);
  userRoutes(router);
  inboxRoutes(router);
  handoverRoutes(router);
  mediaRoutes(router);
  operatorRoutes(router);
  deliveryRoutes(router);
  pushSettingsRoutes(router);
  return router;
}
