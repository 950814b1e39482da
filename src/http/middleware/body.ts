// JSON request bodies. The Client API also reads JSON sent as text/plain (any charset): the
// Parley web library posts string bodies without a content type, which browsers send as
// text/plain to avoid a preflight, and Android's Retrofit scalars converter does the same.
// Other APIs take application/json (and +json) only; anything else stays unparsed and is
// refused with 415 by parseBody.
import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import type { AppContextExtras, AppState } from '../types.ts';

const JSON_TYPES = ['json'];
const CLIENT_JSON_TYPES = ['json', 'text/plain'];

export function jsonBody(options: { limit: string; isClientPath: (path: string) => boolean }): Middleware<AppState, AppContextExtras> {
  const parser = (jsonTypes: string[]) =>
    koaBody({ json: true, jsonStrict: true, jsonTypes, jsonLimit: options.limit, urlencoded: false, text: false, multipart: false });
  const plain = parser(JSON_TYPES);
  const client = parser(CLIENT_JSON_TYPES);
  return async (ctx, next) => {
    const clientPath = options.isClientPath(ctx.path);
    ctx.state.jsonTypes = clientPath ? CLIENT_JSON_TYPES : JSON_TYPES;
    await (clientPath ? client : plain)(ctx, next);
  };
}
