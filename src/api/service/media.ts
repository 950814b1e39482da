import { readMedia } from '../../conversations/media.ts';
import { notFound } from '../../errors.ts';
import { sendMedia } from '../../http/media-response.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';
import { serviceCaller } from './service-access.ts';
import { serviceMediaParams } from './schema.ts';

/**
 * A conversation's upload, for the Service: a message payload carries `{{img/<ref>}}` and
 * the Service fetches `/serviceApi/v2.3/media/<ref>`. Another account's file answers 404,
 * like an unknown one.
 */
export function mediaRoutes(router: AppRouter): void {
  router.get('/media/:accountId/:year/:month/:day/:file', async (ctx) => {
    const { accountId, year, month, day, file } = parseParams(ctx, serviceMediaParams);
    const caller = serviceCaller(ctx);
    const found =
      accountId === caller.account.id
        ? await readMedia(ctx.deps.db.orm.em, ctx.deps.media, { accountId }, `${year}/${month}/${day}/${file}`)
        : null;
    if (!found) throw notFound('media_not_found');
    sendMedia(ctx, found);
  });
}
