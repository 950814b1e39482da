// The client's address (addresses.ts) as ctx.ip, before anything reads it: the access log, the
// write limits and the admin login limits. Koa's own ctx.ip would be the leftmost
// X-Forwarded-For entry, which the client chooses.
import type { Middleware } from 'koa';
import type { TrustedProxies } from '../../addresses.ts';
import type { AppContextExtras, AppState } from '../types.ts';

export function clientAddress(trusted: TrustedProxies): Middleware<AppState, AppContextExtras> {
  return (ctx, next) => {
    ctx.request.ip = trusted.clientAddress(ctx.req.socket.remoteAddress, ctx.req.headers['x-forwarded-for']);
    return next();
  };
}
