import { registerDevice } from '../../chat/devices.ts';
import { respond } from '../../http/envelope.ts';
import { limitWrites } from '../../http/middleware/rate-limit.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseBody } from '../../http/validate.ts';
import { caller, requestUrl } from './auth.ts';
import { deviceBody } from './schema.ts';

export function deviceRoutes(router: AppRouter): void {
  router.post('/devices', limitWrites(), async (ctx) => {
    const body = parseBody(ctx, deviceBody);
    const { account, deviceId, identity } = caller(ctx);
    const { userAdditionalInformation, ...fields } = body;
    const result = await registerDevice(ctx.deps.db.orm.em, {
      account,
      deviceId,
      identity,
      fields,
      userAdditionalInformation,
      requestUrl: requestUrl(ctx, body.referer),
    });
    if (result.mergedFrom !== undefined) {
      ctx.deps.realtime.publish({ kind: 'merged', fromUserId: result.mergedFrom, toUserId: result.user.id });
    }
    respond(ctx, {
      data: { userId: result.user.id },
      notifications: [{ type: 'success', message: 'device_successfully_subscribed' }],
    });
  });
}
