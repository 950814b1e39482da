import { route, type AdminRoute } from './route.ts';
import {
  findDelivery,
  listEmailDeliveries,
  listAttempts,
  listDeliveries,
  listPushDeliveries,
  type DeliveryLogEntry,
} from '../../deliveries/listings.ts';
import { redeliver, retryWaiting } from '../../deliveries/redeliver.ts';
import { deliveryAccountId } from '../../deliveries/account-of.ts';
import { respond } from '../../http/respond.ts';
import { conflict, notFound } from '../../errors.ts';
import { parseParams } from '../../http/validate.ts';
import type { AppContext } from '../../http/types.ts';
import { presentDelivery, presentDeliveryAttempt, presentDeliveryStats } from '../../presenters/delivery.ts';
import { deliveryStats } from '../../deliveries/stats.ts';
import { auditedChange } from './audit-context.ts';
import { respondPage } from './keyset-page.ts';
import { authorizeRecord } from './operator-access.ts';
import { rule } from './policy.ts';
import { accountIdParams, deliveriesQuery, deliveryIdParams, serviceDeliveriesQuery, serviceIdParams } from './schema.ts';
import { authorizedService } from './services.ts';

export const deliveryRoutes: AdminRoute[] = [
  // Webhook payloads hold message text and user information: the conversation itself.
  route({
    method: 'GET',
    path: '/services/:serviceId/deliveries',
    rule: rule('record', 'deliveries:read', 'conversations:read'),
    summary: 'The deliveries log, by state, creation time (since, until) and user',
    params: serviceIdParams,
    query: serviceDeliveriesQuery,
    record: authorizedService,
    handler: async (ctx, { record: service, query }) => {
      const rows = await listDeliveries(ctx.deps.db.orm.em, {
        serviceId: service.id,
        state: query.state,
        limit: query.limit,
        beforeSeq: query.before,
        since: query.since,
        until: query.until,
        userId: query.userId,
      });
      respondWithLog(ctx, rows, query.limit);
    },
  }),
  // Counts only, no payload: the conversation is not read.
  route({
    method: 'GET',
    path: '/services/:serviceId/delivery-stats',
    rule: rule('record', 'deliveries:read'),
    summary: 'Deliveries pending, dead and delivered, and the last hour per minute (attempts delivered and failed)',
    params: serviceIdParams,
    record: authorizedService,
    handler: async (ctx, { record: service }) => {
      respond(ctx, { data: presentDeliveryStats(await deliveryStats(ctx.deps.db.orm.em, service.id)) });
    },
  }),
  // Push payloads hold message text too.
  accountLog('/accounts/:accountId/push-deliveries', "The push deliveries log: pushes to the account's devices", listPushDeliveries),
  accountLog(
    '/accounts/:accountId/email-deliveries',
    "The email deliveries log: answers by email to the account's users",
    listEmailDeliveries,
  ),
  // Statuses and errors only, no payload.
  route({
    method: 'GET',
    path: '/deliveries/:deliveryId/attempts',
    rule: rule('record', 'deliveries:read'),
    summary: 'Every attempt of a delivery (webhook or push): when, how long, status, error, outcome, next attempt',
    params: deliveryIdParams,
    record: authorizedDelivery,
    handler: async (ctx, { params: { deliveryId } }) => {
      respond(ctx, { data: (await listAttempts(ctx.deps.db.orm.em, deliveryId)).map(presentDeliveryAttempt) });
    },
  }),
  // Moves attempts forward; no payload is read or shown.
  route({
    method: 'POST',
    path: '/services/:serviceId/deliveries/retry',
    rule: rule('record', 'deliveries:manage'),
    audit: 'deliveries.retry',
    summary: "Send the Service's deliveries that wait for a later attempt now (after its outage), each the head of its conversation",
    params: serviceIdParams,
    record: authorizedService,
    handler: async (ctx, { record: service }) => {
      const retried = await auditedChange(
        ctx,
        (tx) => retryWaiting(tx, service.id),
        (n) => ({ accountId: service.accountId, target: { serviceId: service.id, retried: n } }),
      );
      if (retried > 0) ctx.deps.deliveries?.nudge();
      respond(ctx, { data: { retried } });
    },
  }),
  route({
    method: 'POST',
    path: '/deliveries/:deliveryId/redeliver',
    rule: rule('record', 'deliveries:manage', 'conversations:read'),
    audit: 'delivery.redeliver',
    summary: 'Send a dead delivery (webhook or push) again',
    params: deliveryIdParams,
    record: authorizedDelivery,
    handler: async (ctx, { params: { deliveryId }, record: { accountId } }) => {
      const requeued = await auditedChange(
        ctx,
        (tx) => redeliver(tx, deliveryId),
        (d) => d && { accountId, target: { deliveryId } },
      );
      if (!requeued) throw conflict('delivery_not_dead');
      ctx.deps.deliveries?.nudge();
      respond(ctx, { data: presentDelivery(requeued) });
    },
  }),
];

/** A page of a deliveries log, newest first, by the rows' sequence number. */
function respondWithLog(ctx: AppContext, rows: DeliveryLogEntry[], limit: number): void {
  respondPage(ctx, rows, limit, presentDelivery, (row) => Number(row.seq));
}

/** The push or email deliveries log of an account, newest first. */
function accountLog(path: string, summary: string, list: typeof listPushDeliveries): AdminRoute {
  return route({
    method: 'GET',
    path,
    rule: rule('account', 'deliveries:read', 'conversations:read'),
    summary,
    params: accountIdParams,
    query: deliveriesQuery,
    handler: async (ctx, { params: { accountId }, query }) => {
      const rows = await list(ctx.deps.db.orm.em, { accountId, state: query.state, limit: query.limit, beforeSeq: query.before });
      respondWithLog(ctx, rows, query.limit);
    },
  });
}

/**
 * The delivery the path names, with its account, if the operator may do the route on that
 * account (a Service's webhook delivery or a push to a device: either way of one account).
 */
async function authorizedDelivery(ctx: AppContext): Promise<{ delivery: DeliveryLogEntry; accountId: number }> {
  const { deliveryId } = parseParams(ctx, deliveryIdParams);
  const em = ctx.deps.db.orm.em;
  return authorizeRecord(
    ctx,
    async () => {
      const delivery = await findDelivery(em, deliveryId);
      if (!delivery) return null;
      const accountId = await deliveryAccountId(em, delivery);
      return accountId === null ? null : { delivery, accountId };
    },
    (record) => record.accountId,
    () => notFound('delivery_not_found'),
  );
}
