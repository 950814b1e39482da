import type { AdminRoute } from './route.ts';
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
import { parseParams, parseQuery } from '../../http/validate.ts';
import type { AppContext } from '../../http/types.ts';
import { presentDelivery, presentDeliveryAttempt, presentDeliveryStats } from '../../presenters/delivery.ts';
import { deliveryStats } from '../../deliveries/stats.ts';
import { audited } from '../../audit/entries.ts';
import { auditRequest } from './audit-context.ts';
import { authorize, authorizeRecord } from './operator-access.ts';
import { rule } from './policy.ts';
import { accountIdParams, deliveriesQuery, deliveryIdParams, serviceDeliveriesQuery, serviceIdParams } from './schema.ts';
import { authorizedService } from './services.ts';

export const deliveryRoutes: AdminRoute[] = [
  // Webhook payloads hold message text and user information: the conversation itself.
  {
    method: 'GET',
    path: '/services/:serviceId/deliveries',
    rule: rule('record', 'deliveries:read', 'conversations:read'),
    summary: 'The deliveries log, by state, creation time (since, until) and user',
    params: serviceIdParams,
    query: serviceDeliveriesQuery,
    handler: async (ctx) => {
      const service = await authorizedService(ctx);
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
    },
  },
  // Counts only, no payload: the conversation is not read.
  {
    method: 'GET',
    path: '/services/:serviceId/delivery-stats',
    rule: rule('record', 'deliveries:read'),
    summary: 'Deliveries pending, dead and delivered, and the last hour per minute (attempts delivered and failed)',
    params: serviceIdParams,
    handler: async (ctx) => {
      const service = await authorizedService(ctx);
      respond(ctx, { data: presentDeliveryStats(await deliveryStats(ctx.deps.db.orm.em, service.id)) });
    },
  },
  // Push payloads hold message text too.
  accountLog('/accounts/:accountId/push-deliveries', "The push deliveries log: pushes to the account's devices", listPushDeliveries),
  accountLog(
    '/accounts/:accountId/email-deliveries',
    "The email deliveries log: answers by email to the account's users",
    listEmailDeliveries,
  ),
  // Statuses and errors only, no payload.
  {
    method: 'GET',
    path: '/deliveries/:deliveryId/attempts',
    rule: rule('record', 'deliveries:read'),
    summary: 'Every attempt of a delivery (webhook or push): when, how long, status, error, outcome, next attempt',
    params: deliveryIdParams,
    handler: async (ctx) => {
      const { deliveryId } = parseParams(ctx, deliveryIdParams);
      await authorizedDelivery(ctx, deliveryId);
      respond(ctx, { data: (await listAttempts(ctx.deps.db.orm.em, deliveryId)).map(presentDeliveryAttempt) });
    },
  },
  // Moves attempts forward; no payload is read or shown.
  {
    method: 'POST',
    path: '/services/:serviceId/deliveries/retry',
    rule: rule('record', 'deliveries:manage'),
    audit: 'deliveries.retry',
    summary: "Send the Service's deliveries that wait for a later attempt now (after its outage), each the head of its conversation",
    params: serviceIdParams,
    handler: async (ctx) => {
      const service = await authorizedService(ctx);
      const retried = await audited(
        ctx.deps.db.orm.em,
        auditRequest(ctx),
        (tx) => retryWaiting(tx, service.id),
        (retried) => ({ accountId: service.accountId, target: { serviceId: service.id, retried } }),
      );
      if (retried > 0) ctx.deps.deliveries?.nudge();
      respond(ctx, { data: { retried } });
    },
  },
  {
    method: 'POST',
    path: '/deliveries/:deliveryId/redeliver',
    rule: rule('record', 'deliveries:manage', 'conversations:read'),
    audit: 'delivery.redeliver',
    summary: 'Send a dead delivery (webhook or push) again',
    params: deliveryIdParams,
    handler: async (ctx) => {
      const { deliveryId } = parseParams(ctx, deliveryIdParams);
      const em = ctx.deps.db.orm.em;
      const delivery = await authorizedDeliveryWithAccount(ctx, deliveryId);
      const requeued = await audited(
        em,
        auditRequest(ctx),
        (tx) => redeliver(tx, deliveryId),
        (d) => d && { accountId: delivery.accountId, target: { deliveryId } },
      );
      if (!requeued) throw conflict('delivery_not_dead');
      ctx.deps.deliveries?.nudge();
      respond(ctx, { data: presentDelivery(requeued) });
    },
  },
];

/** The push or email deliveries log of an account, newest first. */
function accountLog(path: string, summary: string, list: typeof listPushDeliveries): AdminRoute {
  return {
    method: 'GET',
    path,
    rule: rule('account', 'deliveries:read', 'conversations:read'),
    summary,
    params: accountIdParams,
    query: deliveriesQuery,
    handler: async (ctx) => {
      const { accountId } = parseParams(ctx, accountIdParams);
      authorize(ctx, accountId);
      const query = parseQuery(ctx, deliveriesQuery);
      const rows = await list(ctx.deps.db.orm.em, { accountId, state: query.state, limit: query.limit, beforeSeq: query.before });
      const last = rows.length === query.limit ? rows[rows.length - 1] : undefined;
      respond(ctx, {
        data: rows.map(presentDelivery),
        extra: { paging: { before: last ? Number(last.seq) : null } },
      });
    },
  };
}

/** The delivery, if the operator may do the route on its account (a Service's webhook delivery or a push to a device: either way of one account). */
async function authorizedDelivery(ctx: AppContext, deliveryId: string): Promise<DeliveryLogEntry> {
  return (await authorizedDeliveryWithAccount(ctx, deliveryId)).delivery;
}

async function authorizedDeliveryWithAccount(
  ctx: AppContext,
  deliveryId: string,
): Promise<{ delivery: DeliveryLogEntry; accountId: number }> {
  const em = ctx.deps.db.orm.em;
  const found = await authorizeRecord(
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
  return found;
}
