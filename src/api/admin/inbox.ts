// The team inbox (docs/dashboard.md): its views, a conversation's state (assignee, status),
// private notes, the timeline, what the team has read, and the account's canned replies.
import { addNote, changeAssignee, changeStatus, conversationState, inboxPage, markRead, timeline } from '../../conversations/inbox.ts';
import { createCannedReply, deleteCannedReply, listCannedReplies, updateCannedReply } from '../../tenancy/canned-replies.ts';
import { findInbox } from '../../tenancy/services.ts';
import { allows } from '../../tenancy/permissions.ts';
import type { AuthenticatedOperator } from '../../tenancy/operators.ts';
import { AccountSchema, UserSchema } from '../../db/entities/index.ts';
import { changeOwner } from '../../conversations/owners.ts';
import { presentUserSummary } from '../../presenters/service-user.ts';
import { respond } from '../../http/respond.ts';
import { conflict, forbidden, notFound } from '../../errors.ts';
import type { AppContext, AppRouter } from '../../http/types.ts';
import { parseBody, parseParams, parseQuery } from '../../http/validate.ts';
import { presentCannedReply, presentConversationState, presentInboxRow, presentTimelineEvent } from '../../presenters/inbox.ts';
import { authorize } from './auth.ts';
import {
  accountIdParams,
  accountUserParams,
  assigneeBody,
  cannedReplyBody,
  cannedReplyChanges,
  cannedReplyParams,
  inboxCursorText,
  inboxQuery,
  noteBody,
  readBody,
  statusBody,
  timelineQuery,
} from './schema.ts';

function signedIn(ctx: AppContext): AuthenticatedOperator {
  const operator = ctx.state.operator;
  if (!operator) throw new Error('requireOperator() must run before admin routes');
  return operator;
}

export function inboxRoutes(router: AppRouter): void {
  router.get('/accounts/:accountId/inbox', async (ctx) => {
    const { accountId } = parseParams(ctx, accountIdParams);
    authorize(ctx, 'GET /accounts/:accountId/inbox', accountId);
    const query = parseQuery(ctx, inboxQuery);
    const em = ctx.deps.db.orm.em;
    const inbox = await findInbox(em, accountId);
    if (!inbox) throw conflict('account_has_no_inbox');
    const page = await inboxPage(em, {
      accountId,
      inboxServiceId: inbox.id,
      operatorId: signedIn(ctx).id,
      view: query.view,
      limit: query.limit,
      after: query.after,
      search: query.q,
    });
    const users = new Map(
      (await em.find(UserSchema, { id: { $in: page.rows.map((r) => r.state.userId) } })).map((u) => [u.id, u] as const),
    );
    respond(ctx, {
      data: page.rows.flatMap((row) => {
        const user = users.get(row.state.userId);
        return user ? [presentInboxRow(user, row.state, row.unread)] : [];
      }),
      extra: { paging: { after: page.next ? inboxCursorText(page.next) : null } },
    });
  });

  router.get('/accounts/:accountId/users/:userId/timeline', async (ctx) => {
    const { accountId, userId } = parseParams(ctx, accountUserParams);
    authorize(ctx, 'GET /accounts/:accountId/users/:userId/timeline', accountId);
    const query = parseQuery(ctx, timelineQuery);
    const em = ctx.deps.db.orm.em;
    const state = await conversationState(em, accountId, userId);
    const events = state ? await timeline(em, accountId, userId, query.limit, query.before) : null;
    if (!state || !events) throw notFound('user_not_found');
    const oldest = events.length === query.limit ? events[events.length - 1] : undefined;
    respond(ctx, {
      data: events.map(presentTimelineEvent),
      extra: { state: presentConversationState(state), paging: { before: oldest?.id ?? null } },
    });
  });

  router.put('/accounts/:accountId/users/:userId/assignee', async (ctx) => {
    const { accountId, userId } = parseParams(ctx, accountUserParams);
    authorize(ctx, 'PUT /accounts/:accountId/users/:userId/assignee', accountId);
    const body = parseBody(ctx, assigneeBody);
    const me = signedIn(ctx);
    // Oneself (or nobody instead of oneself) with conversations:reply; anyone else needs conversations:assign.
    const onlyMe = (id: number | null) => id === null || id === me.id;
    if (!(onlyMe(body.assigneeId) && onlyMe(body.expectedAssigneeId)) && !allows(me.grants, 'conversations:assign', accountId)) {
      throw forbidden('permission_denied');
    }
    const state = await changeAssignee(ctx.deps.db.orm.em, {
      accountId,
      userId,
      operatorId: me.id,
      assigneeId: body.assigneeId,
      expectedAssigneeId: body.expectedAssigneeId,
    });
    respond(ctx, { data: presentConversationState(state) });
  });

  router.put('/accounts/:accountId/users/:userId/status', async (ctx) => {
    const { accountId, userId } = parseParams(ctx, accountUserParams);
    authorize(ctx, 'PUT /accounts/:accountId/users/:userId/status', accountId);
    const body = parseBody(ctx, statusBody);
    const state = await changeStatus(ctx.deps.db.orm.em, {
      accountId,
      userId,
      operatorId: signedIn(ctx).id,
      status: body.status,
      snoozedUntil: body.snoozedUntil ? new Date(body.snoozedUntil) : null,
      expectedStatus: body.expectedStatus,
    });
    respond(ctx, { data: presentConversationState(state) });
  });

  router.post('/accounts/:accountId/users/:userId/notes', async (ctx) => {
    const { accountId, userId } = parseParams(ctx, accountUserParams);
    authorize(ctx, 'POST /accounts/:accountId/users/:userId/notes', accountId);
    const body = parseBody(ctx, noteBody);
    const note = await addNote(ctx.deps.db.orm.em, { accountId, userId, operatorId: signedIn(ctx).id, text: body.text });
    respond(ctx, { data: presentTimelineEvent(note) }, 201);
  });

  router.put('/accounts/:accountId/users/:userId/read', async (ctx) => {
    const { accountId, userId } = parseParams(ctx, accountUserParams);
    authorize(ctx, 'PUT /accounts/:accountId/users/:userId/read', accountId);
    const body = parseBody(ctx, readBody);
    const state = await markRead(ctx.deps.db.orm.em, accountId, userId, body.messageId);
    respond(ctx, { data: presentConversationState(state) });
  });

  // Take over from a bot: the inbox becomes the owner, as PUT …/owner naming it would make it
  // (changeOwner delivered to the bot, initiatedBy the operator), with conversations:reply.
  router.post('/accounts/:accountId/users/:userId/take-over', async (ctx) => {
    const { accountId, userId } = parseParams(ctx, accountUserParams);
    authorize(ctx, 'POST /accounts/:accountId/users/:userId/take-over', accountId);
    const em = ctx.deps.db.orm.em;
    const user = await em.findOne(UserSchema, { id: userId, accountId });
    if (!user) throw notFound('user_not_found');
    const [account, inbox] = await Promise.all([em.findOneOrFail(AccountSchema, { id: accountId }), findInbox(em, accountId)]);
    if (!inbox) throw conflict('account_has_no_inbox');
    const result = await changeOwner(em, {
      account,
      initiatedBy: { operator: signedIn(ctx).identifier },
      userId,
      newOwnerIdentification: inbox.identification,
    });
    respond(ctx, { data: { ...presentUserSummary(result.user), changed: result.changed } });
  });

  router.get('/accounts/:accountId/canned-replies', async (ctx) => {
    const { accountId } = parseParams(ctx, accountIdParams);
    authorize(ctx, 'GET /accounts/:accountId/canned-replies', accountId);
    respond(ctx, { data: (await listCannedReplies(ctx.deps.db.orm.em, accountId)).map(presentCannedReply) });
  });

  router.post('/accounts/:accountId/canned-replies', async (ctx) => {
    const { accountId } = parseParams(ctx, accountIdParams);
    authorize(ctx, 'POST /accounts/:accountId/canned-replies', accountId);
    const body = parseBody(ctx, cannedReplyBody);
    respond(ctx, { data: presentCannedReply(await createCannedReply(ctx.deps.db.orm.em, accountId, body)) }, 201);
  });

  router.patch('/accounts/:accountId/canned-replies/:replyId', async (ctx) => {
    const { accountId, replyId } = parseParams(ctx, cannedReplyParams);
    authorize(ctx, 'PATCH /accounts/:accountId/canned-replies/:replyId', accountId);
    const body = parseBody(ctx, cannedReplyChanges);
    respond(ctx, { data: presentCannedReply(await updateCannedReply(ctx.deps.db.orm.em, accountId, replyId, body)) });
  });

  router.delete('/accounts/:accountId/canned-replies/:replyId', async (ctx) => {
    const { accountId, replyId } = parseParams(ctx, cannedReplyParams);
    authorize(ctx, 'DELETE /accounts/:accountId/canned-replies/:replyId', accountId);
    await deleteCannedReply(ctx.deps.db.orm.em, accountId, replyId);
    respond(ctx, { data: null });
  });
}
