// CORS for the Client API (every version prefix, media included): chat widgets call it from
// customers' sites with custom headers (x-iris-identification, Authorization, a site's own
// x-… headers), so browsers send a preflight first. The Client API authenticates by headers,
// never cookies, so any origin may call it unless its account lists allowed origins; that
// check needs the account, which only the actual request names (a preflight carries no
// identification), so preflights are answered for every origin and the account's list is
// applied to the request itself (api/client/caller.ts refuses it with 403 origin_not_allowed).
// That refusal keeps its CORS headers: its body says only what the refused page learns anyway
// from the failure, and a readable code lets the widget tell the site owner what to fix rather
// than leave a bare CORS error. Service and Admin APIs are server-to-server: no CORS.
import cors from '@koa/cors';
import type { Middleware } from 'koa';
import type { AppContextExtras, AppState } from '../types.ts';

export function clientCors(options: {
  maxAgeSeconds: number;
  isClientPath: (path: string) => boolean;
}): Middleware<AppState, AppContextExtras> {
  const handle = cors({
    // Echo the caller's origin (no credentials are ever allowed); no Origin, no CORS headers.
    origin: (ctx) => ctx.get('origin'),
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT'],
    // Unset: the headers a preflight asks for are allowed, so sites can add their own x-… headers.
    allowHeaders: undefined,
    exposeHeaders: ['retry-after', 'content-disposition', 'x-request-id'],
    maxAge: options.maxAgeSeconds,
  });
  const client: Middleware<AppState, AppContextExtras> = async (ctx, next) => {
    await handle(ctx, next);
    if (ctx.state.refusedOrigin !== undefined) {
      ctx.state.log.info(
        { origin: ctx.state.refusedOrigin, path: ctx.path },
        'cross-origin request refused: origin not allowed by the account',
      );
    }
  };
  return (ctx, next) => (options.isClientPath(ctx.path) ? (client(ctx, next) as Promise<void>) : next());
}
