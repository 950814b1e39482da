import { readMedia } from '../../conversations/media.ts';
import { respond } from '../../http/respond.ts';
import { notFound } from '../../errors.ts';
import { sendMedia } from '../../http/media-response.ts';
import { limitWrites } from '../../http/middleware/rate-limit.ts';
import { receiveUpload } from '../../http/middleware/multipart.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';
import type { MediaKind } from '../../media/types.ts';
import { conversation } from './client-identity.ts';
import { mediaParams } from './schema.ts';

export function mediaRoutes(router: AppRouter, maxBytes: Readonly<Record<MediaKind, number>>): void {
  // Quotas before the body is read; the body then streamed to a temporary file under the cap left.
  router.post('/media', limitWrites(), async (ctx) => {
    const media = await receiveUpload(ctx, maxBytes, () => {
      const { account, user, device } = conversation(ctx);
      return Promise.resolve({ account, user, deviceId: device.id });
    });
    respond(ctx, { data: { media: media.id } });
  });

  router.get('/media/:year/:month/:day/:file', async (ctx) => {
    const { year, month, day, file } = parseParams(ctx, mediaParams);
    const { account, user } = conversation(ctx);
    const found = await readMedia(
      ctx.deps.db.orm.em,
      ctx.deps.media,
      { accountId: account.id, userId: user.id },
      `${year}/${month}/${day}/${file}`,
    );
    if (!found) throw notFound('media_not_found');
    sendMedia(ctx, found);
  });
}
