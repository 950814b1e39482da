import type { Middleware } from 'koa';
import { methodNotAllowed, notFound } from '../../errors.ts';
import type { AppContextExtras, AppState } from '../types.ts';

interface MatchedLayer {
  methods: string[];
}

/**
 * The end of the chain: reached only when no route answered. A path that some route
 * serves with other methods is a 405 naming them; anything else is an unknown route.
 */
export function unmatched(): Middleware<AppState, AppContextExtras> {
  return (ctx) => {
    const matched = (ctx as { matched?: MatchedLayer[] }).matched ?? [];
    // Router-level middleware layers match every path and carry no methods; they do not count.
    const methods = new Set(matched.flatMap((layer) => layer.methods));
    if (methods.size > 0) throw methodNotAllowed([...methods]);
    throw notFound('route_not_found');
  };
}
