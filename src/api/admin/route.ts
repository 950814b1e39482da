// One Admin route, declared once: method, path, who may call it, its schemas and its handler.
// routers.ts mounts the declarations, auth.ts checks the rule of the route being served, and
// the OpenAPI document (src/openapi/operations.ts) describes them; nothing else names a route.
import type { z } from 'zod';
import type { AppContext } from '../../http/types.ts';
import type { DeclaredRoute } from './policy.ts';

export interface AdminRoute extends DeclaredRoute {
  /** For the OpenAPI document. */
  summary: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** multipart/form-data with one file field of this name. */
  upload?: string;
  /** The success status when it is not 200. */
  status?: number;
  /** The success answer's media type when it is not the JSON envelope. */
  produces?: string;
  handler: (ctx: AppContext) => Promise<void> | void;
}

/** `METHOD path`, as the permission test and error messages name a route. */
export const routeName = (route: Pick<AdminRoute, 'method' | 'path'>): string => `${route.method} ${route.path}`;
