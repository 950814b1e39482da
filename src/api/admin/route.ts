// One Admin route, declared once: method, path, who may call it, its schemas and its handler.
// routers.ts mounts the declarations, checks the rule and validates the input before the
// handler runs (operator-access.ts applies the rule), and the OpenAPI document
// (src/openapi/operations.ts) describes them; nothing else names a route.
import type { z } from 'zod';
import type { AppContext } from '../../http/types.ts';
import type { DeclaredRoute } from './policy.ts';

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What the router hands a handler: the declaration's params, query and body, validated, and a `record` route's record. */
export interface RouteInput<P, Q, B, R> {
  params: P;
  query: Q;
  body: B;
  record: R;
}

interface Declaration<P, Q, B, R> extends DeclaredRoute {
  /** For the OpenAPI document. */
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * A body whose schema depends on the path (push settings: the kind's), which the handler
   * validates itself; the OpenAPI document shows this one.
   */
  bodyByPath?: z.ZodType;
  /** multipart/form-data with one file field of this name. */
  upload?: string;
  /** The success status when it is not 200. */
  status?: number;
  /** The success answer's media type when it is not the JSON envelope. */
  produces?: string;
  /** Refuses a route the configuration switches off (password sign-in, single sign-on), before anything is read. */
  guard?: (ctx: AppContext) => void;
  /**
   * A `record` route: loads the record its path names and asserts the rule on its account
   * (authorizeRecord()), before the rest of the input is read.
   */
  record?: (ctx: AppContext) => Promise<R>;
  handler: (ctx: AppContext, input: RouteInput<Parsed<P>, Parsed<Q>, Parsed<B>, R>) => Promise<void> | void;
}

export type AdminRoute = Declaration<z.ZodObject | undefined, z.ZodObject | undefined, z.ZodType | undefined, unknown>;
/** Any route's input, as the router reads it. */
export type AdminInput = Parameters<AdminRoute['handler']>[1];

/** A declaration, its handler typed by its own schemas. */
export function route<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R = undefined,
>(declaration: Declaration<P, Q, B, R>): AdminRoute {
  // The router parses the input with these very schemas (routers.ts), so what the handler is
  // given has the types they parse to; the list of routes holds them all as one type.
  return declaration as unknown as AdminRoute;
}

/** `METHOD path`, as the permission test and error messages name a route. */
export const routeName = (route: Pick<AdminRoute, 'method' | 'path'>): string => `${route.method} ${route.path}`;
