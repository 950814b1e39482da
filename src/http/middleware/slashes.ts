// A doubled slash routes like one: the Android library appends `paging.before`
// (`/messages/before:N`) to a base URL that ends in a slash (`…/clientApi/v1.9/`).
import type { Middleware } from 'koa';
import type { AppContextExtras, AppState } from '../types.ts';

export function collapseSlashes(): Middleware<AppState, AppContextExtras> {
  // Not async: a pass-through returns next()'s promise rather than wrapping it in one more.
  return (ctx, next) => {
    if (ctx.path.includes('//')) ctx.path = ctx.path.replace(/\/{2,}/g, '/');
    return next();
  };
}
