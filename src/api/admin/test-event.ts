import { sendTestEvent } from '../../deliveries/test-event.ts';
import { AccountSchema } from '../../db/entities/index.ts';
import { respond } from '../../http/respond.ts';
import { conflict } from '../../errors.ts';
import type { AppRouter } from '../../http/types.ts';
import { authorizedService } from './services.ts';
import { refuseInbox } from '../../tenancy/services.ts';

/** The dashboard's "send test event": one signed POST now, the receiver's answer returned (deliveries/test-event.ts). */
export function testEventRoutes(router: AppRouter): void {
  router.post('/services/:serviceId/test-event', async (ctx) => {
    const service = await authorizedService(ctx, 'POST /services/:serviceId/test-event');
    refuseInbox(service, 'inbox_has_no_webhook');
    if (!service.webhookUrl) throw conflict('no_webhook_url');
    const operator = ctx.state.operator;
    if (!operator) throw new Error('requireOperator() must run before admin routes');
    const account = await ctx.deps.db.orm.em.findOneOrFail(AccountSchema, { id: service.accountId });
    const { allowPrivate, timeoutMs } = ctx.deps.config.webhooks;
    const result = await sendTestEvent(
      ctx.deps.db.orm.em.fork(),
      { account, service, initiatedBy: operator.identifier },
      { allowPrivate, timeoutMs },
    );
    respond(ctx, { data: result });
  });
}
