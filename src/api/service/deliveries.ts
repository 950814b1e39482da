// The calling Service's own deliveries: a Service that was down (a bot restarted, a desk
// deployed) asks for what waits for a later attempt, rather than wait out the retry schedule.
import { retryWaiting } from '../../deliveries/redeliver.ts';
import { respond } from '../../http/respond.ts';
import type { AppRouter } from '../../http/types.ts';
import { serviceCaller } from './service-access.ts';

export function deliveryRoutes(router: AppRouter): void {
  // The operators' "Retry waiting now" (POST /adminApi/services/{id}/deliveries/retry), for the Service itself.
  router.post('/deliveries/retry', async (ctx) => {
    const { service } = serviceCaller(ctx);
    const retried = await retryWaiting(ctx.deps.db.orm.em, service.id);
    if (retried > 0) ctx.deps.deliveries?.nudge();
    respond(ctx, { data: { retried } });
  });
}
