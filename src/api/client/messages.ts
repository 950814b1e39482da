import { findMessage, messagePage, raiseStatus, unseenAgentMessages, type Cursor } from '../../conversations/messages.ts';
import { respond } from '../../http/respond.ts';
import { limitWrites } from '../../http/middleware/rate-limit.ts';
import { notFound } from '../../errors.ts';
import type { AppContext, AppRouter } from '../../http/types.ts';
import { parseBody, parseParams } from '../../http/validate.ts';
import { presentClientMessage, presentCurrentAgent } from '../../presenters/client-message.ts';
import { messageBody } from '../../commands/client/input.ts';
import { sendClientMessage } from '../../commands/client/send-message.ts';
import { conversation } from './client-identity.ts';
import { messageCursorParams, statusBody, statusParams } from './schema.ts';

/** Bounded pages: a client asks for more with paging.before. */
const PAGE_SIZE = 50;

async function answerPage(ctx: AppContext, cursor: Cursor): Promise<void> {
  const { account, user } = conversation(ctx);
  const em = ctx.deps.db.orm.em;
  const { rows, olderThan } = await messagePage(em, user.id, cursor, PAGE_SIZE);
  const newest = rows[0];
  const after = newest?.id ?? (cursor.kind === 'after' ? cursor.id : undefined);
  respond(ctx, {
    data: rows.map((m) => presentClientMessage(m, account.id)),
    extra: {
      // Relative to the version root, as the reference bodies show them: Android appends
      // `before` to its base URL (`…/clientApi/v1.9/`), the other clients build their own.
      paging: {
        before: olderThan ? `/messages/before:${olderThan}` : '',
        after: after === undefined ? '' : `/messages/after:${after}`,
      },
      agent: presentCurrentAgent(user),
      stickyMessage: account.stickyMessage ?? null,
      welcomeMessage: account.welcomeMessage ?? null,
    },
  });
}

export function messageRoutes(router: AppRouter): void {
  router.post('/messages', limitWrites(), async (ctx) => {
    const body = parseBody(ctx, messageBody);
    const message = await sendClientMessage(ctx.deps.messages, conversation(ctx), body, ctx.get('referer') || undefined);
    // The reference body carries the id as a string.
    respond(ctx, { data: { messageId: String(message.id) } });
  });

  router.get('/messages', (ctx) => answerPage(ctx, { kind: 'latest' }));

  router.get('/messages/unseen/count', async (ctx) => {
    const { user } = conversation(ctx);
    const messageIds = await unseenAgentMessages(ctx.deps.db.orm.em, user.id);
    respond(ctx, { data: { messageIds, count: messageIds.length } });
  });

  router.put('/messages/status/:status', limitWrites(), async (ctx) => {
    const { status } = parseParams(ctx, statusParams);
    const { messageIds } = parseBody(ctx, statusBody);
    const { account, user } = conversation(ctx);
    const updated = await raiseStatus(ctx.deps.db.orm.em, user.id, messageIds, status);
    if (!updated) throw notFound('message_not_found');
    respond(ctx, { data: updated.map((m) => presentClientMessage(m, account.id)) });
  });

  router.get('/messages/:cursor', async (ctx) => {
    const { cursor } = parseParams(ctx, messageCursorParams);
    const [kind, id] = cursor.includes(':') ? cursor.split(':') : ['one', cursor];
    if (kind === 'before' || kind === 'after') return answerPage(ctx, { kind, id: Number(id) });
    const { account, user } = conversation(ctx);
    const message = await findMessage(ctx.deps.db.orm.em, user.id, Number(id));
    if (!message) throw notFound('message_not_found');
    respond(ctx, { data: presentClientMessage(message, account.id) });
  });
}
