import { getAccount } from '../../tenancy/accounts.ts';
import { route, type AdminRoute } from './route.ts';
import { rule, SENDS_CONTENT } from './policy.ts';
import { sendTestEvent } from '../../deliveries/test-event.ts';
import { respond } from '../../http/respond.ts';
import { conflict } from '../../errors.ts';
import { signedIn } from './operator-access.ts';
import { authorizedService } from './services.ts';
import { refuseInbox } from '../../tenancy/services.ts';
import { serviceIdParams } from './schema.ts';

/** The dashboard's "send test event": one signed POST now, the receiver's answer returned (deliveries/test-event.ts). */
export const testEventRoutes: AdminRoute[] = [
  // A signed POST to the webhook URL now, its answer shown.
  route({
    method: 'POST',
    path: '/services/:serviceId/test-event',
    rule: rule('record', 'services:edit', SENDS_CONTENT),
    summary: "Send a signed test payload now (not through the outbox); answers the receiver's status and body",
    params: serviceIdParams,
    record: authorizedService,
    handler: async (ctx, { record: service }) => {
      refuseInbox(service, 'inbox_has_no_webhook');
      if (!service.webhookUrl) throw conflict('no_webhook_url');
      const account = await getAccount(ctx.deps.db.orm.em, service.accountId);
      const { allowPrivate, timeoutMs } = ctx.deps.config.webhooks;
      const result = await sendTestEvent(
        ctx.deps.db.orm.em.fork(),
        { account, service, initiatedBy: signedIn(ctx).identifier },
        { allowPrivate, timeoutMs },
      );
      respond(ctx, { data: result });
    },
  }),
];
