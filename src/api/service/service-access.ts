import type { Middleware } from 'koa';
import type { ServiceCaller } from './caller.ts';
import type { AppContext, AppContextExtras, AppState } from '../../http/types.ts';

/** `Authorization: Bearer <service API key>`. */
export function requireService(): Middleware<AppState, AppContextExtras> {
  return async (ctx, next) => {
    const match = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'));
    ctx.state.service = await ctx.deps.serviceCallers.authenticate(match?.[1]);
    await next();
  };
}

export function serviceCaller(ctx: AppContext): ServiceCaller {
  const service = ctx.state.service;
  if (!service) throw new Error('requireService() must run before Service API routes');
  return service;
}
