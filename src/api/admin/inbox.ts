// The team inbox (docs/dashboard.md): its views, a conversation's state (assignee, status),
// private notes, the timeline, what the team has read, and the account's canned replies.
import { getAccount } from '../../tenancy/accounts.ts';
import { operatorNames } from '../../tenancy/operators.ts';
import { usersById, recentDevices } from '../../conversations/lookups.ts';
import { route, type AdminRoute } from './route.ts';
import { rule } from './policy.ts';
import { addNote, changeAssignee, changeStatus, conversationState, inboxPage, markRead, timeline } from '../../conversations/inbox.ts';
import { createCannedReply, deleteCannedReply, listCannedReplies, updateCannedReply } from '../../tenancy/canned-replies.ts';
import { findInbox } from '../../tenancy/services.ts';
import { allows } from '../../tenancy/permissions.ts';
import { changeOwner } from '../../conversations/owners.ts';
import { presentUserSummary } from '../../presenters/service-user.ts';
import { respond } from '../../http/respond.ts';
import { conflict, forbidden, notFound } from '../../errors.ts';
import { presentCannedReply, presentConversationState, presentInboxRow, presentTimelineEvent } from '../../presenters/inbox.ts';
import { sentFields } from '../../audit/entries.ts';
import { auditedChange, auditRequest } from './audit-context.ts';
import { signedIn } from './operator-access.ts';
import { userOfPath } from './users.ts';
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

export const inboxRoutes: AdminRoute[] = [
  route({
    method: 'GET',
    path: '/accounts/:accountId/inbox',
    rule: rule('account', 'conversations:read'),
    summary: 'The team inbox: a view (mine, unassigned, open, bots, resolved), longest-waiting customer first, unread counts; q searches',
    params: accountIdParams,
    query: inboxQuery,
    handler: async (ctx, { params: { accountId }, query }) => {
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
      const users = await usersById(
        em,
        page.rows.map((r) => r.state.userId),
      );
      respond(ctx, {
        data: page.rows.flatMap((row) => {
          const user = users.get(row.state.userId);
          return user ? [presentInboxRow(user, row.state, row.unread)] : [];
        }),
        extra: {
          paging: { after: page.next ? inboxCursorText(page.next) : null },
          operators: await operatorNames(
            em,
            page.rows.map((r) => r.state.assigneeId),
          ),
        },
      });
    },
  }),
  // Notes and status lines are the conversation's content.
  route({
    method: 'GET',
    path: '/accounts/:accountId/users/:userId/timeline',
    rule: rule('account', 'conversations:read'),
    summary: "A conversation's team state and timeline lines (private notes, status and assignee changes), newest first",
    params: accountUserParams,
    query: timelineQuery,
    handler: async (ctx, { params: { accountId, userId }, query }) => {
      const em = ctx.deps.db.orm.em;
      const state = await conversationState(em, accountId, userId);
      const events = state ? await timeline(em, accountId, userId, query.limit, query.before) : null;
      if (!state || !events) throw notFound('user_not_found');
      const oldest = events.length === query.limit ? events[events.length - 1] : undefined;
      respond(ctx, {
        data: events.map(presentTimelineEvent),
        extra: {
          state: presentConversationState(state),
          paging: { before: oldest?.id ?? null },
          // Who the customer is, for the side panel: their devices (type, version, page address), newest first.
          devices: (await recentDevices(em, accountId, userId, 5)).map((d) => ({
            type: (['android', 'ios', 'web', 'generic'] as const)[d.type - 1] ?? 'generic',
            version: d.version ?? null,
            pageAddress: d.referer ?? null,
            createdAt: d.createdAt.toISOString(),
          })),
          operators: await operatorNames(em, [
            state.assigneeId,
            ...events.flatMap((e) => [
              e.operatorId,
              typeof e.data?.to === 'number' ? e.data.to : null,
              typeof e.data?.from === 'number' ? e.data.from : null,
            ]),
          ]),
        },
      });
    },
  }),
  // Assigning another operator (not oneself) also needs conversations:assign, checked in the route.
  route({
    method: 'PUT',
    path: '/accounts/:accountId/users/:userId/assignee',
    rule: rule('account', 'conversations:reply'),
    summary: 'Assign (compare-and-set: 409 assignee_changed); another operator than oneself needs conversations:assign',
    params: accountUserParams,
    body: assigneeBody,
    handler: async (ctx, { params: { accountId, userId }, body }) => {
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
    },
  }),
  route({
    method: 'PUT',
    path: '/accounts/:accountId/users/:userId/status',
    rule: rule('account', 'conversations:reply'),
    summary: 'Open, snooze (until a time or the next customer message) or resolve; optional compare-and-set (409 status_changed)',
    params: accountUserParams,
    body: statusBody,
    handler: async (ctx, { params: { accountId, userId }, body }) => {
      const state = await changeStatus(ctx.deps.db.orm.em, {
        accountId,
        userId,
        operatorId: signedIn(ctx).id,
        status: body.status,
        snoozedUntil: body.snoozedUntil ? new Date(body.snoozedUntil) : null,
        expectedStatus: body.expectedStatus,
      });
      respond(ctx, { data: presentConversationState(state) });
    },
  }),
  route({
    method: 'POST',
    path: '/accounts/:accountId/users/:userId/notes',
    rule: rule('account', 'conversations:reply'),
    summary: 'A private note between operators: never shown to the customer, in a webhook or a push',
    params: accountUserParams,
    body: noteBody,
    status: 201,
    handler: async (ctx, { params: { accountId, userId }, body }) => {
      const note = await addNote(ctx.deps.db.orm.em, { accountId, userId, operatorId: signedIn(ctx).id, text: body.text });
      respond(ctx, { data: presentTimelineEvent(note) }, 201);
    },
  }),
  route({
    method: 'PUT',
    path: '/accounts/:accountId/users/:userId/read',
    rule: rule('account', 'conversations:read'),
    summary: 'The team has read the conversation up to this message',
    params: accountUserParams,
    body: readBody,
    handler: async (ctx, { params: { accountId, userId }, body }) => {
      const state = await markRead(ctx.deps.db.orm.em, accountId, userId, body.messageId);
      respond(ctx, { data: presentConversationState(state) });
    },
  }),
  // Take over from a bot: the inbox becomes the owner, as PUT …/owner naming it would make it
  // (changeOwner delivered to the bot, initiatedBy the operator), with conversations:reply.
  // Only ever to the account's own inbox: answering includes taking over from a bot.
  route({
    method: 'POST',
    path: '/accounts/:accountId/users/:userId/take-over',
    rule: rule('account', 'conversations:reply'),
    audit: 'user.take_over',
    summary: 'Take over from a bot: the team inbox becomes the owner (changeOwner delivered to the bot, initiatedBy the operator)',
    params: accountUserParams,
    handler: async (ctx, { params }) => {
      const em = ctx.deps.db.orm.em;
      await userOfPath(ctx, params);
      const [account, inbox] = await Promise.all([getAccount(em, params.accountId), findInbox(em, params.accountId)]);
      if (!inbox) throw conflict('account_has_no_inbox');
      const result = await changeOwner(
        em,
        {
          account,
          initiatedBy: { operator: signedIn(ctx).identifier },
          userId: params.userId,
          newOwnerIdentification: inbox.identification,
        },
        auditRequest(ctx),
      );
      respond(ctx, { data: { ...presentUserSummary(result.user), changed: result.changed } });
    },
  }),
  // Read by whoever answers; managed as the account's settings are.
  route({
    method: 'GET',
    path: '/accounts/:accountId/canned-replies',
    rule: rule('account', 'conversations:read'),
    summary: "The account's canned replies, by shortcut",
    params: accountIdParams,
    handler: async (ctx, { params: { accountId } }) => {
      respond(ctx, { data: (await listCannedReplies(ctx.deps.db.orm.em, accountId)).map(presentCannedReply) });
    },
  }),
  route({
    method: 'POST',
    path: '/accounts/:accountId/canned-replies',
    rule: rule('account', 'accounts:edit'),
    audit: 'canned_reply.create',
    summary: 'A canned reply (409 already_exists for a shortcut taken)',
    params: accountIdParams,
    body: cannedReplyBody,
    status: 201,
    handler: async (ctx, { params: { accountId }, body }) => {
      const reply = await auditedChange(
        ctx,
        (tx) => createCannedReply(tx, accountId, body),
        (r) => ({ accountId, target: { replyId: r.id }, changed: sentFields(body) }),
      );
      respond(ctx, { data: presentCannedReply(reply) }, 201);
    },
  }),
  route({
    method: 'PATCH',
    path: '/accounts/:accountId/canned-replies/:replyId',
    rule: rule('account', 'accounts:edit'),
    audit: 'canned_reply.update',
    summary: 'Change a canned reply',
    params: cannedReplyParams,
    body: cannedReplyChanges,
    handler: async (ctx, { params: { accountId, replyId }, body }) => {
      const reply = await auditedChange(
        ctx,
        (tx) => updateCannedReply(tx, accountId, replyId, body),
        () => ({ accountId, target: { replyId }, changed: sentFields(body) }),
      );
      respond(ctx, { data: presentCannedReply(reply) });
    },
  }),
  route({
    method: 'DELETE',
    path: '/accounts/:accountId/canned-replies/:replyId',
    rule: rule('account', 'accounts:edit'),
    audit: 'canned_reply.delete',
    summary: 'Delete a canned reply',
    params: cannedReplyParams,
    handler: async (ctx, { params: { accountId, replyId } }) => {
      await auditedChange(
        ctx,
        (tx) => deleteCannedReply(tx, accountId, replyId),
        () => ({ accountId, target: { replyId } }),
      );
      respond(ctx, { data: null });
    },
  }),
];
