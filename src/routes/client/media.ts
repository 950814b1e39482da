import { readFile, rm } from 'node:fs/promises';
import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { readMedia, uploadMedia } from '../../chat/media.ts';
import { respond } from '../../http/envelope.ts';
import { AppError, notFound } from '../../http/errors.ts';
import { limitWrites } from '../../http/middleware/rate-limit.ts';
import type { AppContextExtras, AppRouter, AppState } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';
import { conversation } from './auth.ts';
import { mediaParams } from './schema.ts';

/** multipart/form-data with one file; a file over the cap is media_too_large, not a generic 413. */
function multipart(maxBytes: number): Middleware<AppState, AppContextExtras> {
  const parse = koaBody({
    multipart: true,
    json: false,
    urlencoded: false,
    text: false,
    formidable: { maxFiles: 1, maxFileSize: maxBytes, maxTotalFileSize: maxBytes, allowEmptyFiles: false },
  });
  return async (ctx, next) => {
    if (!ctx.request.is('multipart')) throw new AppError(415, 'multipart_required');
    try {
      await parse(ctx, () => Promise.resolve());
    } catch (err) {
      const status = (err as { httpCode?: number; status?: number }).httpCode ?? (err as { status?: number }).status;
      if (status === 413) throw new AppError(413, 'media_too_large');
      throw new AppError(400, 'invalid_multipart');
    }
    await next();
  };
}

export function mediaRoutes(router: AppRouter, maxBytes: number): void {
  router.post('/media', limitWrites(), multipart(maxBytes), async (ctx) => {
    const files = ctx.request.files?.media;
    const file = Array.isArray(files) ? files[0] : files;
    try {
      if (!file) throw new AppError(422, 'media_required');
      const { account, user } = await conversation(ctx);
      const bytes = await readFile(file.filepath);
      const media = await uploadMedia(ctx.deps.db.orm.em, ctx.deps.media, account, user, {
        bytes,
        originalName: file.originalFilename ?? null,
      });
      respond(ctx, { data: { media: media.id } });
    } finally {
      // formidable's temporary files are ours to remove.
      const all = Object.values(ctx.request.files ?? {}).flat();
      await Promise.all(all.map((f) => rm(f.filepath, { force: true })));
    }
  });

  router.get('/media/:year/:month/:day/:file', async (ctx) => {
    const { year, month, day, file } = parseParams(ctx, mediaParams);
    const { account, user } = await conversation(ctx);
    const found = await readMedia(ctx.deps.db.orm.em, ctx.deps.media, account, user, `${year}/${month}/${day}/${file}`);
    if (!found) throw notFound('media_not_found');
    ctx.type = found.media.mimeType;
    ctx.set('cache-control', 'private, max-age=86400');
    ctx.set('x-content-type-options', 'nosniff');
    ctx.body = found.bytes;
  });
}
