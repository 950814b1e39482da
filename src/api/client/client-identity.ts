import type { Middleware } from 'koa';
import type { CallerSnapshot } from '../../conversations/caller-snapshot.ts';
import { openConversation, type ClientCaller } from './caller.ts';
import { AppError } from '../../errors.ts';
import type { AppContext, AppContextExtras, AppState } from '../../http/types.ts';

/** Every client call: identification header, account, and the authorization header if any. */
export function identifyClient(): Middleware<AppState, AppContextExtras> {
  return async (ctx, next) => {
    const origin = ctx.get('origin') || undefined;
    try {
      ctx.state.client = await ctx.deps.callers.identify({
        identification: ctx.get('x-iris-identification') || undefined,
        authorization: ctx.get('authorization') || undefined,
        origin,
      });
    } catch (err) {
      if (err instanceof AppError && err.code === 'origin_not_allowed') ctx.state.refusedOrigin = origin;
      throw err;
    }
    await next();
  };
}

export function caller(ctx: AppContext): ClientCaller {
  const client = ctx.state.client;
  if (!client) throw new Error('identifyClient() must run before client routes');
  return client;
}

export function conversation(ctx: AppContext): CallerSnapshot {
  return openConversation(caller(ctx));
}
