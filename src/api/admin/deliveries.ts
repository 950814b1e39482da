import { DeviceSchema, UserSchema } from '../../db/entities/index.ts';
import {
  findDelivery,
  listEmailDeliveries,
  listAttempts,
  listDeliveries,
  listPushDeliveries,
  type DeliveryLogEntry,
} from '../../deliveries/listings.ts';
import { redeliver, retryWaiting } from '../../deliveries/redeliver.ts';
import { findService } from '../../tenancy/services.ts';
import { respond } from '../../http/respond.ts';
import { conflict, notFound } from '../../errors.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseParams, parseQuery } from '../../http/validate.ts';
import type { AppContext } from '../../http/types.ts';
import { presentDelivery, presentDeliveryAttempt, presentDeliveryStats } from '../../presenters/delivery.ts';
import { deliveryStats } from '../../deliveries/stats.ts';
import { authorize, authorizeRecord } from './auth.ts';
import type { AdminRoute } from './policy.ts';
import { accountIdParams, deliveriesQuery, deliveryIdParams, serviceDeliveriesQuery } from './schema.ts';
import { authorizedService } from './services.ts';

export function deliveryRoutes(router: AppRouter): void {
  router.get('/services/:serviceId/deliveries', async (ctx) => {
    const service = await authorizedService(ctx, 'GET /services/:serviceId/deliveries');
    const query = parseQuery(ctx, serviceDeliveriesQuery);
    const rows = await listDeliveries(ctx.deps.db.orm.em, {
      serviceId: service.id,
      state: query.state,
      limit: query.limit,
      beforeSeq: query.before,
      since: query.since,
      until: query.until,
      userId: query.userId,
    });
    const last = rows.length === query.limit ? rows[rows.length - 1] : undefined;
    respond(ctx, {
      data: rows.map(presentDelivery),
      extra: { paging: { before: last ? Number(last.seq) : null } },
    });
  });

  router.get('/services/:serviceId/delivery-stats', async (ctx) => {
    const service = await authorizedService(ctx, 'GET /services/:serviceId/delivery-stats');
    respond(ctx, { data: presentDeliveryStats(await deliveryStats(ctx.deps.db.orm.em, service.id)) });
  });

  // Pushes to the account's devices and answers by email to its users: the same log, rows with a
  // deviceId or a userId instead of a serviceId.
  const accountLogs = [
    ['/accounts/:accountId/push-deliveries', listPushDeliveries],
    ['/accounts/:accountId/email-deliveries', listEmailDeliveries],
  ] as const;
  for (const [path, list] of accountLogs) {
    router.get(path, async (ctx) => {
      const { accountId } = parseParams(ctx, accountIdParams);
      authorize(ctx, `GET ${path}`, accountId);
      const query = parseQuery(ctx, deliveriesQuery);
      const rows = await list(ctx.deps.db.orm.em, { accountId, state: query.state, limit: query.limit, beforeSeq: query.before });
      const last = rows.length === query.limit ? rows[rows.length - 1] : undefined;
      respond(ctx, {
        data: rows.map(presentDelivery),
        extra: { paging: { before: last ? Number(last.seq) : null } },
      });
    });
  }

  router.get('/deliveries/:deliveryId/attempts', async (ctx) => {
    const { deliveryId } = parseParams(ctx, deliveryIdParams);
    await authorizedDelivery(ctx, 'GET /deliveries/:deliveryId/attempts', deliveryId);
    respond(ctx, { data: (await listAttempts(ctx.deps.db.orm.em, deliveryId)).map(presentDeliveryAttempt) });
  });

  router.post('/services/:serviceId/deliveries/retry', async (ctx) => {
    const service = await authorizedService(ctx, 'POST /services/:serviceId/deliveries/retry');
    const retried = await retryWaiting(ctx.deps.db.orm.em, service.id);
    if (retried > 0) ctx.deps.deliveries?.nudge();
    respond(ctx, { data: { retried } });
  });

  router.post('/deliveries/:deliveryId/redeliver', async (ctx) => {
    const { deliveryId } = parseParams(ctx, deliveryIdParams);
    const em = ctx.deps.db.orm.em;
    await authorizedDelivery(ctx, 'POST /deliveries/:deliveryId/redeliver', deliveryId);
    const requeued = await redeliver(em, deliveryId);
    if (!requeued) throw conflict('delivery_not_dead');
    ctx.deps.deliveries?.nudge();
    respond(ctx, { data: presentDelivery(requeued) });
  });
}

/** The delivery, if the operator may do `route` on its account (a Service's webhook delivery or a push to a device: either way of one account). */
async function authorizedDelivery(ctx: AppContext, route: AdminRoute, deliveryId: string): Promise<DeliveryLogEntry> {
  const em = ctx.deps.db.orm.em;
  const found = await authorizeRecord(
    ctx,
    route,
    async () => {
      const delivery = await findDelivery(em, deliveryId);
      if (!delivery) return null;
      const owner =
        delivery.serviceId !== null
          ? await findService(em, delivery.serviceId)
          : delivery.deviceId !== null
            ? await em.findOne(DeviceSchema, { id: delivery.deviceId })
            : await em.findOne(UserSchema, { id: delivery.userId ?? 0 });
      return owner ? { delivery, accountId: owner.accountId } : null;
    },
    (record) => record.accountId,
    () => notFound('delivery_not_found'),
  );
  return found.delivery;
}
