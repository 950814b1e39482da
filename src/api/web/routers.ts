// What browsers load from Palaver besides the APIs: the chat widget's script, the demo page, and
// the links of answers by email, and replies by email from hosted mail providers.
import Router from '@koa/router';
import type { AppContextExtras, AppRouter, AppState } from '../../http/types.ts';
import { WebAssets } from '../../http/web-assets.ts';
import { demoPageRoutes } from './demo-page.ts';
import { emailLinkRoutes } from './email.ts';
import { emailInboundRoutes } from './email-inbound.ts';
import { widgetRoutes } from './widget.ts';

export function webRouter(assets: WebAssets = new WebAssets()): AppRouter {
  const router: AppRouter = new Router<AppState, AppContextExtras>();
  widgetRoutes(router, assets);
  demoPageRoutes(router);
  emailLinkRoutes(router);
  emailInboundRoutes(router);
  return router;
}
