import type { Middleware } from 'koa';
import type { ServiceCaller } from './caller.ts';
import type { AppContext, AppContextExtras, AppState } from '../../http/types.ts';

/**
 * `Authorization: Bearer <service API key>`. Not an async function: with a key the node holds
 * (ServiceCallers), the request goes on without waiting on a promise.
 */
export function requireService(): Middleware<AppState, AppContextExtras> {
  return (ctx, next) => {
    const match = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'));
    const caller = ctx.deps.serviceCallers.authenticate(match?.[1]);
    if (!(caller instanceof Promise)) {
      ctx.state.service = caller;
      return next();
    }
    return caller.then((read) => {
      ctx.state.service = read;
      return next();
    });
  };
}

export function serviceCaller(ctx: AppContext): ServiceCaller {
  const service = ctx.state.service;
  if (!service) throw new Error('requireService() must run before Service API routes');
  return service;
}
