// JSON request bodies. The Client API also reads JSON sent as text/plain (any charset): the
// Parley web library posts string bodies without a content type, which browsers send as
// text/plain to avoid a preflight, and Android's Retrofit scalars converter does the same.
// Other APIs take application/json (and +json) only; anything else stays unparsed and is
// refused with 415 by parseBody.
import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { payloadTooLarge } from '../../errors.ts';
import type { AppContextExtras, AppState } from '../types.ts';

// 'application/json' rather than type-is's shorthand 'json', which means the same but is looked
// up in the MIME database at every check of every request.
const JSON_TYPES = ['application/json'];
const CLIENT_JSON_TYPES = ['application/json', 'text/plain'];

const UNITS: Readonly<Record<string, number>> = { b: 1, kb: 1024, mb: 1024 * 1024 };

/** A limit as the configuration writes it ("256kb", "1mb") in bytes. */
export function limitBytes(limit: string): number {
  const match = /^(\d+)(b|kb|mb)$/.exec(limit);
  return match ? Number(match[1]) * (UNITS[match[2] ?? 'b'] ?? 1) : Number.POSITIVE_INFINITY;
}

/**
 * Refuses a body whose Content-Length says it is over `maxBytes` before reading any of it.
 * Read as a number here: co-body and Koa cut the header to 32 bits (`~~`), so 4 GiB read as 0
 * and the request waited for a body until the request timeout.
 */
export function refuseDeclaredLength(ctx: { get(name: string): string }, maxBytes: number, code?: string): void {
  const declared = ctx.get('content-length');
  if (declared !== '' && Number(declared) > maxBytes) throw payloadTooLarge(code);
}

export function jsonBody(options: { limit: string; isClientPath: (path: string) => boolean }): Middleware<AppState, AppContextExtras> {
  const parser = (jsonTypes: string[]) =>
    koaBody({ json: true, jsonStrict: true, jsonTypes, jsonLimit: options.limit, urlencoded: false, text: false, multipart: false });
  const plain = parser(JSON_TYPES);
  const client = parser(CLIENT_JSON_TYPES);
  const maxBytes = limitBytes(options.limit);
  return (ctx, next) => {
    const clientPath = options.isClientPath(ctx.path);
    ctx.state.jsonTypes = clientPath ? CLIENT_JSON_TYPES : JSON_TYPES;
    // Kept for parseBody (http/validate.ts): the headers it depends on do not change.
    ctx.state.bodyIsJson = Boolean(ctx.request.is(ctx.state.jsonTypes));
    if (ctx.state.bodyIsJson) refuseDeclaredLength(ctx, maxBytes);
    return (clientPath ? client : plain)(ctx, next) as Promise<void>;
  };
}
