import { findService, updateService } from '../../tenancy/services.ts';
import { respond } from '../../http/respond.ts';
import { notFound } from '../../errors.ts';
import type { AppContext, AppRouter } from '../../http/types.ts';
import { parseBody, parseParams } from '../../http/validate.ts';
import { presentService } from '../../presenters/service.ts';
import { AccountSchema, type Service } from '../../db/entities/index.ts';
import { authorizeFields, authorizeRecord } from './auth.ts';
import type { AdminRoute } from './policy.ts';
import { serviceIdParams, updateServiceBody } from './schema.ts';

/**
 * Loads the Service named in the path and asserts the route's permissions on its account; a
 * Service of another account answers as an unknown one (404 service_not_found).
 */
export async function authorizedService(ctx: AppContext, route: AdminRoute): Promise<Service> {
  const { serviceId } = parseParams(ctx, serviceIdParams);
  return authorizeRecord(
    ctx,
    route,
    () => findService(ctx.deps.db.orm.em, serviceId),
    (service) => service.accountId,
    () => notFound('service_not_found'),
  );
}

export function serviceRoutes(router: AppRouter): void {
  router.patch('/services/:serviceId', async (ctx) => {
    const { id, accountId } = await authorizedService(ctx, 'PATCH /services/:serviceId');
    const body = parseBody(ctx, updateServiceBody);
    authorizeFields(ctx, 'PATCH /services/:serviceId', accountId, body);
    const em = ctx.deps.db.orm.em;
    const service = await updateService(em, id, body);
    if (!service) throw notFound('service_not_found');
    // Deliveries held while the Service was off may go now.
    if (body.enabled) ctx.deps.deliveries?.nudge();
    const account = await em.findOneOrFail(AccountSchema, { id: accountId });
    respond(ctx, { data: presentService(service, account.defaultServiceId ?? null) });
  });
}
