import { findService, updateService } from '../../tenancy/services.ts';
import { respond } from '../../http/respond.ts';
import { notFound } from '../../errors.ts';
import type { AppContext, AppRouter } from '../../http/types.ts';
import { parseBody, parseParams } from '../../http/validate.ts';
import { presentService } from '../../presenters/service.ts';
import { AccountSchema, type Service } from '../../db/entities/index.ts';
import type { Permission } from '../../tenancy/permissions.ts';
import { authorize } from './auth.ts';
import { serviceIdParams, updateServiceBody } from './schema.ts';

/** Loads the Service named in the path and asserts the operator's permission on its account. */
export async function authorizedService(ctx: AppContext, permission: Permission): Promise<Service> {
  const { serviceId } = parseParams(ctx, serviceIdParams);
  const service = await findService(ctx.deps.db.orm.em, serviceId);
  if (!service) throw notFound('service_not_found');
  authorize(ctx, permission, service.accountId);
  return service;
}

export function serviceRoutes(router: AppRouter): void {
  router.patch('/services/:serviceId', async (ctx) => {
    const { id, accountId } = await authorizedService(ctx, 'services:edit');
    const body = parseBody(ctx, updateServiceBody);
    const em = ctx.deps.db.orm.em;
    const service = await updateService(em, id, body);
    if (!service) throw notFound('service_not_found');
    // Deliveries held while the Service was off may go now.
    if (body.enabled) ctx.deps.deliveries?.nudge();
    const account = await em.findOneOrFail(AccountSchema, { id: accountId });
    respond(ctx, { data: presentService(service, account.defaultServiceId ?? null) });
  });
}
