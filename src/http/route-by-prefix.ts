import type { Middleware } from 'koa';
import type { AppContextExtras, AppRouter, AppState } from './types.ts';

type AppMiddleware = Middleware<AppState, AppContextExtras>;
type Routes = ReturnType<AppRouter['routes']>;

/**
 * The routers as one middleware that hands a request only to the routers of its path's prefix
 * (`/adminApi`, `/clientApi/v1.x`, `/serviceApi/v2.3`), and any other path to the unprefixed
 * routers, each group in the order given. Mounted one after the other, every router would try each
 * of its routes' patterns on every request: a Service API call would be matched against the whole
 * Admin and Client APIs first. No unprefixed route lies under an API prefix, so a request meets the
 * same routes as before, and a 405 still names the methods of its path's routes (ctx.matched).
 * Prefixes are compared without case, as @koa/router's (not case-sensitive) patterns compare them.
 */
export function routeByPrefix(routers: AppRouter[]): AppMiddleware {
  const prefixed = new Map<string, Routes[]>();
  const unprefixed: Routes[] = [];
  for (const router of routers) {
    const prefix = router.opts.prefix?.toLowerCase();
    if (!prefix) {
      unprefixed.push(router.routes());
      continue;
    }
    const group = prefixed.get(prefix) ?? [];
    group.push(router.routes());
    prefixed.set(prefix, group);
  }
  // The router's middleware sets ctx.params and ctx.router itself; its type asks for them beforehand.
  return (ctx, next) => {
    const path = ctx.path.toLowerCase();
    let group = unprefixed;
    for (const [prefix, routes] of prefixed) {
      if (path.startsWith(prefix) && (path.length === prefix.length || path[prefix.length] === '/')) {
        group = routes;
        break;
      }
    }
    const run = (i: number): Promise<void> =>
      i === group.length ? next() : Promise.resolve(group[i]!(ctx as Parameters<Routes>[0], () => run(i + 1)));
    return run(0);
  };
}
