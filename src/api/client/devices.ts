import { registerDevice } from '../../conversations/devices.ts';
import { respond } from '../../http/respond.ts';
import { AppError } from '../../errors.ts';
import { limitWrites } from '../../http/middleware/rate-limit.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseBody } from '../../http/validate.ts';
import { deviceBody, pageAddress } from '../../commands/client/input.ts';
import { caller } from './client-identity.ts';

/**
 * A registered device asking to be anonymous again (a logout) is refused and nothing changes
 * (the spec's rule). Both codes are named: the spec's `device_not_registered`, and
 * `device_requires_authorization`, the one the Parley web library recognises, and only as the
 * first notification, to start a fresh anonymous device. So the versioned paths that real
 * clients use lead with the latter, and the spec's unversioned paths with the former.
 */
function logoutRefused(versioned: boolean): AppError {
  const codes = versioned
    ? ['device_requires_authorization', 'device_not_registered']
    : ['device_not_registered', 'device_requires_authorization'];
  return new AppError(
    403,
    codes[0]!,
    codes.map((message) => ({ type: 'error' as const, message })),
  );
}

export function deviceRoutes(router: AppRouter, options: { versioned: boolean }): void {
  router.post('/devices', limitWrites(), async (ctx) => {
    const { userAdditionalInformation, referer, referrer, ...fields } = parseBody(ctx, deviceBody);
    const { account, deviceId, identity } = caller(ctx);
    const pageUrl = pageAddress({ referer, referrer }, ctx.get('referer') || undefined);
    const result = await registerDevice(ctx.deps.db.orm.em, {
      account,
      deviceId,
      identity,
      fields: { ...fields, ...((referer ?? referrer) ? { referer: referer ?? referrer } : {}) },
      userAdditionalInformation,
      requestUrl: pageUrl,
    }).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'device_not_registered') throw logoutRefused(options.versioned);
      throw err;
    });
    respond(ctx, {
      data: { userId: result.user.id },
      notifications: [{ type: 'success', message: 'device_successfully_subscribed' }],
    });
  });
}
