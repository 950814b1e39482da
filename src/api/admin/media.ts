import { readMedia } from '../../conversations/media.ts';
import { notFound } from '../../errors.ts';
import { sendMedia } from '../../http/media-response.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';
import { authorize } from './auth.ts';
import { accountMediaParams } from './schema.ts';

/**
 * A file of a conversation, for the dashboard's conversation view: the `img/<accountId>/…`
 * reference of a message names it. Served as to clients and Services (http/media-response.ts).
 * A path of another account's file answers 404 like an unknown one: the account of the path
 * is the one the file is looked up in.
 */
export function mediaRoutes(router: AppRouter): void {
  router.get('/accounts/:accountId/media/:year/:month/:day/:file', async (ctx) => {
    const { accountId, year, month, day, file } = parseParams(ctx, accountMediaParams);
    authorize(ctx, 'GET /accounts/:accountId/media/:year/:month/:day/:file', accountId);
    const found = await readMedia(ctx.deps.db.orm.em, ctx.deps.media, { accountId }, `${year}/${month}/${day}/${file}`);
    if (!found) throw notFound('media_not_found');
    sendMedia(ctx, found);
  });
}
