// Typed input of a request: its body, path parameters and query string pass a zod schema
// (validation.ts), and every problem is reported at once (422 validation_failed).
import type { z } from 'zod';
import { unsupportedMediaType } from '../errors.ts';
import { check } from '../validation.ts';
import type { AppContext } from './types.ts';

export function parseBody<S extends z.ZodType>(ctx: AppContext, schema: S): z.output<S> {
  // A body in another format is refused rather than read as empty and validated as such.
  if (ctx.request.length && !(ctx.state.bodyIsJson ?? ctx.request.is(ctx.state.jsonTypes ?? ['json']))) throw unsupportedMediaType();
  return check(schema, ctx.request.body ?? {}, 'body');
}

export function parseParams<S extends z.ZodType>(ctx: AppContext, schema: S): z.output<S> {
  return check(schema, ctx.params, 'params');
}

export function parseQuery<S extends z.ZodType>(ctx: AppContext, schema: S): z.output<S> {
  return check(schema, ctx.query, 'query');
}
