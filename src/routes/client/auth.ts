import type { Middleware } from 'koa';
import { openConversation, type ClientCaller, type Conversation } from '../../client/caller.ts';
import { AppError } from '../../http/errors.ts';
import type { AppContext, AppContextExtras, AppState } from '../../http/types.ts';
import { MAX_REFERER_LENGTH } from './schema.ts';

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

export function conversation(ctx: AppContext): Conversation {
  return openConversation(caller(ctx));
}

/** `referer` (or `referrer`) from the body, else the Referer header: becomes the message's requestUrl. */
export function requestUrl(ctx: AppContext, body: { referer?: string | undefined; referrer?: string | undefined }): string | null {
  const header = ctx.get('referer').replaceAll('\u0000', '');
  return body.referer ?? body.referrer ?? (header && header.length <= MAX_REFERER_LENGTH ? header : null);
}
