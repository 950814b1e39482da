import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { Logger } from '../logger.ts';
import type { AppDeps } from '../deps.ts';
import type { AuthenticatedOperator } from '../tenancy/operators.ts';
import type { ClientCaller } from '../api/client/caller.ts';
import type { ServiceCaller } from '../api/service/caller.ts';
import type { DeclaredRoute } from '../api/admin/policy.ts';

/** What middleware learns about one request as it passes down the chain. */
export interface AppState {
  requestId: string;
  startedAt: bigint;
  log: Logger;
  operator?: AuthenticatedOperator;
  /** The Admin route being served, as declared (api/admin/route.ts): its rule and audit action. */
  adminRoute?: DeclaredRoute;
  client?: ClientCaller;
  service?: ServiceCaller;
  /** The content types this route reads as JSON (see middleware/body.ts). */
  jsonTypes?: string[];
  /** Whether the request's body is of one of those types (see middleware/body.ts). */
  bodyIsJson?: boolean;
  /** Set when the caller's account does not allow the request's Origin: the refusal is logged. */
  refusedOrigin?: string;
}

/** Dependencies every handler can reach as ctx.deps (set once on app.context). */
export interface AppContextExtras {
  deps: AppDeps;
}

/** The context route handlers see: app state, deps and the router's `params`. */
export type AppContext = RouterContext<AppState, AppContextExtras>;
export type AppRouter = Router<AppState, AppContextExtras>;
