import type { Middleware } from 'koa';
import { openConversation, type ClientCaller, type Conversation } from '../../client/caller.ts';
import type { AppContext, AppContextExtras, AppState } from '../../http/types.ts';

/** Every client call: identification header, account, and the authorization header if any. */
export function identifyClient(): Middleware<AppState, AppContextExtras> {
  return async (ctx, next) => {
    ctx.state.client = await ctx.deps.callers.identify({
      identification: ctx.get('x-iris-identification') || undefined,
      authorization: ctx.get('authorization') || undefined,
    });
    await next();
  };
}

export function caller(ctx: AppContext): ClientCaller {
  const client = ctx.state.client;
  if (!client) throw new Error('identifyClient() must run before client routes');
  return client;
}

export function conversation(ctx: AppContext): Conversation {
  return openConversation(caller(ctx));
}

/** `referer` from the body, else the Referer header: becomes the message's requestUrl. */
export function requestUrl(ctx: AppContext, fromBody: string | null | undefined): string | null {
  const header = ctx.get('referer');
  return fromBody ?? (header && header.length <= 2048 ? header : null);
}
