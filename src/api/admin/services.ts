import { getAccount } from '../../tenancy/accounts.ts';
import { route, type AdminRoute } from './route.ts';
import { rule, SENDS_CONTENT } from './policy.ts';
import { findService, updateService } from '../../tenancy/services.ts';
import { respond } from '../../http/respond.ts';
import { notFound } from '../../errors.ts';
import type { AppContext } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';
import { presentService } from '../../presenters/service.ts';
import { type Service } from '../../db/entities/index.ts';
import { sentFields } from '../../audit/entries.ts';
import { auditRequest } from './audit-context.ts';
import { authorizeFields, authorizeRecord } from './operator-access.ts';
import { serviceIdParams, updateServiceBody } from './schema.ts';

/**
 * Loads the Service named in the path and asserts the route's permissions on its account; a
 * Service of another account answers as an unknown one (404 service_not_found).
 */
export async function authorizedService(ctx: AppContext): Promise<Service> {
  const { serviceId } = parseParams(ctx, serviceIdParams);
  return authorizeRecord(
    ctx,
    () => findService(ctx.deps.db.orm.em, serviceId),
    (service) => service.accountId,
    () => notFound('service_not_found'),
  );
}

export const serviceRoutes: AdminRoute[] = [
  // A name or enabling it changes nothing of where content goes; a webhook URL does.
  route({
    method: 'PATCH',
    path: '/services/:serviceId',
    rule: { ...rule('record', 'services:edit'), fields: { webhookUrl: [SENDS_CONTENT] } },
    audit: 'service.update',
    summary: 'Name, webhook URL, enable or disable',
    params: serviceIdParams,
    body: updateServiceBody,
    record: authorizedService,
    handler: async (ctx, { record: { id, accountId }, body }) => {
      authorizeFields(ctx, accountId, body);
      const em = ctx.deps.db.orm.em;
      const service = await updateService(em, id, body, { ...auditRequest(ctx), changed: sentFields(body) });
      if (!service) throw notFound('service_not_found');
      // Deliveries held while the Service was off may go now.
      if (body.enabled) ctx.deps.deliveries?.nudge();
      const account = await getAccount(em, accountId);
      respond(ctx, { data: presentService(service, account.defaultServiceId ?? null) });
    },
  }),
];
