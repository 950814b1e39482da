// Typed input for handlers: request bodies, path parameters and query strings pass a zod
// schema here, and every problem is reported at once (422 validation_failed).
import type { z } from 'zod';
import { unsupportedMediaType, validationFailed } from './errors.ts';
import type { AppContext } from './types.ts';

/** Checks any input (a socket event's body, say); problems are named under `prefix`. */
export function check<S extends z.ZodType>(schema: S, input: unknown, prefix: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationFailed(
    result.error.issues.map((issue) => ({
      field: [prefix, ...issue.path.map(String)].filter(Boolean).join('.') || prefix,
      detail: issue.message,
    })),
  );
}

export function parseBody<S extends z.ZodType>(ctx: AppContext, schema: S): z.output<S> {
  // A body in another format is refused rather than read as empty and validated as such.
  if (ctx.request.length && !ctx.request.is(ctx.state.jsonTypes ?? ['json'])) throw unsupportedMediaType();
  return check(schema, ctx.request.body ?? {}, 'body');
}

export function parseParams<S extends z.ZodType>(ctx: AppContext, schema: S): z.output<S> {
  return check(schema, ctx.params, 'params');
}

export function parseQuery<S extends z.ZodType>(ctx: AppContext, schema: S): z.output<S> {
  return check(schema, ctx.query, 'query');
}
