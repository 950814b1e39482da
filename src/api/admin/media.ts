import { readMedia } from '../../conversations/media.ts';
import { refuseMerged } from '../../conversations/users.ts';
import { AccountSchema, UserSchema } from '../../db/entities/index.ts';
import { notFound } from '../../errors.ts';
import { sendMedia } from '../../http/media-response.ts';
import { receiveUpload } from '../../http/middleware/multipart.ts';
import { respond } from '../../http/respond.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';
import { authorize } from './auth.ts';
import { accountMediaParams, accountUserParams } from './schema.ts';

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

  // A file for an operator's answer, on the Service API's upload path (a Service's upload: no
  // device, the account's storage quota, the same types and caps); the answer then names it
  // as `media: {id}` (POST …/messages), and the customer gets it like a bot's file.
  router.post('/accounts/:accountId/users/:userId/media', async (ctx) => {
    const { accountId, userId } = parseParams(ctx, accountUserParams);
    authorize(ctx, 'POST /accounts/:accountId/users/:userId/media', accountId);
    const em = ctx.deps.db.orm.em;
    const media = await receiveUpload(ctx, ctx.deps.config.client.mediaMaxBytes, async () => {
      const [account, user] = await Promise.all([
        em.findOne(AccountSchema, { id: accountId }),
        em.findOne(UserSchema, { id: userId, accountId }),
      ]);
      if (!account || !user) throw notFound('user_not_found');
      refuseMerged(user);
      return { account, user, deviceId: null };
    });
    respond(ctx, { data: { media: media.id } }, 201);
  });
}
