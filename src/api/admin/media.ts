import { findAccountUser } from '../../conversations/lookups.ts';
import { findAccount } from '../../tenancy/accounts.ts';
import { route, type AdminRoute } from './route.ts';
import { rule } from './policy.ts';
import { readMedia } from '../../conversations/media.ts';
import { refuseMerged } from '../../conversations/users.ts';
import { notFound } from '../../errors.ts';
import { sendMedia } from '../../http/media-response.ts';
import { receiveUpload } from '../../http/middleware/multipart.ts';
import { respond } from '../../http/respond.ts';
import { accountMediaParams, accountUserParams } from './schema.ts';

/**
 * A file of a conversation, for the dashboard's conversation view: the `img/<accountId>/…`
 * reference of a message names it. Served as to clients and Services (http/media-response.ts).
 * A path of another account's file answers 404 like an unknown one: the account of the path
 * is the one the file is looked up in.
 */
export const mediaRoutes: AdminRoute[] = [
  // Files sent in conversations: their content, like the messages'.
  route({
    method: 'GET',
    path: '/accounts/:accountId/media/:year/:month/:day/:file',
    rule: rule('account', 'conversations:read'),
    summary: "A file of a conversation, by a message's media reference img/<accountId>/<year>/<month>/<day>/<file>",
    params: accountMediaParams,
    produces: '*/*',
    handler: async (ctx, { params: { accountId, year, month, day, file } }) => {
      const found = await readMedia(ctx.deps.db.orm.em, ctx.deps.media, { accountId }, `${year}/${month}/${day}/${file}`);
      if (!found) throw notFound('media_not_found');
      sendMedia(ctx, found);
    },
  }),
  // A file for an operator's answer, on the Service API's upload path (a Service's upload: no
  // device, the account's storage quota, the same types and caps); the answer then names it
  // as `media: {id}` (POST …/messages), and the customer gets it like a bot's file.
  // A file for an answer: stored in the conversation, counted in the account's storage quota.
  route({
    method: 'POST',
    path: '/accounts/:accountId/users/:userId/media',
    rule: rule('account', 'conversations:reply'),
    summary: "Upload a file to the conversation for the signed-in operator's answer (as a Service's upload: types, caps, quota)",
    params: accountUserParams,
    upload: 'media',
    status: 201,
    handler: async (ctx, { params: { accountId, userId } }) => {
      const em = ctx.deps.db.orm.em;
      const media = await receiveUpload(ctx, ctx.deps.config.client.mediaMaxBytes, async () => {
        const [account, user] = await Promise.all([findAccount(em, accountId), findAccountUser(em, accountId, userId)]);
        if (!account || !user) throw notFound('user_not_found');
        refuseMerged(user);
        return { account, user, deviceId: null };
      });
      respond(ctx, { data: { media: media.id } }, 201);
    },
  }),
];
