import { readMedia, uploadMedia } from '../../conversations/media.ts';
import { respond } from '../../http/respond.ts';
import { notFound } from '../../errors.ts';
import { sendMedia } from '../../http/media-response.ts';
import { limitWrites } from '../../http/middleware/rate-limit.ts';
import { multipart, withUploadedFile } from '../../http/middleware/multipart.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';
import type { MediaKind } from '../../media/types.ts';
import { conversation } from './auth.ts';
import { mediaParams } from './schema.ts';

export function mediaRoutes(router: AppRouter, maxBytes: Readonly<Record<MediaKind, number>>): void {
  router.post('/media', limitWrites(), multipart(Math.max(...Object.values(maxBytes))), async (ctx) => {
    const media = await withUploadedFile(ctx, 'media', async (file) => {
      const { account, user } = conversation(ctx);
      return uploadMedia(ctx.deps.db.orm.em, ctx.deps.media, account, user, file, maxBytes, ctx.deps.config.media.storageQuotaBytes);
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
