// The write limit (limits.ts) as Koa middleware for the Client API's writing routes.
import type { Middleware } from 'koa';
import { consumeWrite, writeLimitKey } from '../../limits.ts';
import type { AppContextExtras, AppState } from '../types.ts';

/**
 * 503 server_busy when the node has too many client writes in progress (http/admission.ts);
 * 429 too_many_requests with Retry-After once the caller's address or device has used its points.
 */
export function limitWrites(): Middleware<AppState, AppContextExtras> {
  // Named: the OpenAPI test finds the routes that can answer 503 server_busy by it.
  return async function admittedWrite(ctx, next) {
    const client = ctx.state.client;
    // Admitted before anything is counted or written: a full node answers 503 server_busy at once.
    const release = ctx.deps.admission.enter();
    try {
      if (client) await consumeWrite(ctx.deps, writeLimitKey(client.account.id, client.deviceId), ctx.ip);
      await next();
    } finally {
      release();
    }
  };
}
