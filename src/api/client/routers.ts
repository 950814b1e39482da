// Client API (docs/client-api.md), served the same under / and each /clientApi/v1.x prefix
// that deployed chat clients use.
import Router from '@koa/router';
import type { AppContextExtras, AppRouter, AppState } from '../../http/types.ts';
import type { MediaKind } from '../../media/types.ts';
import { identifyClient } from './client-identity.ts';
import { chatSettingsRoutes } from './chat-settings.ts';
import { contactRoutes } from './contact.ts';
import { transcriptRoutes } from './transcript.ts';
import { deviceRoutes } from './devices.ts';
import { eventRoutes } from './event-routes.ts';
import { mediaRoutes } from './media.ts';
import { messageRoutes } from './messages.ts';

/**
 * The spec's unversioned paths, and the version prefixes the Parley libraries use: 1.6–1.9,
 * and 1.2–1.5, which the Android library still offers (deprecated there) and whose calls are
 * the same where they exist (its 1.5-and-older image upload through POST /messages is not).
 */
export const CLIENT_PREFIXES = ['', ...['2', '3', '4', '5', '6', '7', '8', '9'].map((minor) => `/clientApi/v1.${minor}`)];

const CLIENT_PATH = new RegExp(
  `^(?:${CLIENT_PREFIXES.filter(Boolean)
    .map((p) => p.replaceAll('.', '\\.'))
    .join('|')})?/(?:devices|messages|media|services/event|users/me/contact|users/me/transcript|chat-settings|conversation-link)(?:/|$)`,
);

/** Whether a request path is one of the Client API's (for CORS and text/plain JSON). */
export function isClientApiPath(path: string): boolean {
  return CLIENT_PATH.test(path);
}

export function clientRouters(options: { mediaMaxBytes: Readonly<Record<MediaKind, number>> }): AppRouter[] {
  return CLIENT_PREFIXES.map((prefix) => {
    const router: AppRouter = new Router<AppState, AppContextExtras>(prefix ? { prefix } : {});
    const routes: AppRouter = new Router<AppState, AppContextExtras>();
    deviceRoutes(routes, { versioned: prefix !== '' });
    messageRoutes(routes);
    eventRoutes(routes);
    mediaRoutes(routes, options.mediaMaxBytes);
    contactRoutes(routes);
    chatSettingsRoutes(routes);
    transcriptRoutes(routes);
    // Identification runs for these routes only, not for every path under the prefix.
    router.use(identifyClient(), routes.routes());
    return router;
  });
}
