import { findAccountUser } from '../../conversations/lookups.ts';
import { route, type AdminRoute } from './route.ts';
import { rule } from './policy.ts';
import { eraseUser } from '../../conversations/erase.ts';
import { changeOwner } from '../../conversations/owners.ts';
import { conversationsByActivity } from '../../conversations/by-activity.ts';
import { messagePage } from '../../conversations/messages.ts';
import { listUsers, getAccount } from '../../tenancy/accounts.ts';
import { MessageType, type User } from '../../db/entities/index.ts';
import { respond } from '../../http/respond.ts';
import { notFound } from '../../errors.ts';
import type { AppContext } from '../../http/types.ts';
import { setAgentTyping } from '../../conversations/agents.ts';
import { operatorAgent } from '../../tenancy/operators.ts';
import { presentClientMessage, presentCurrentAgent } from '../../presenters/client-message.ts';
import { presentUserSummary } from '../../presenters/service-user.ts';
import { auditRequest } from './audit-context.ts';
import { respondPage } from './keyset-page.ts';
import { signedIn } from './operator-access.ts';
import {
  accountIdParams,
  accountUserParams,
  activityCursorText,
  conversationsQuery,
  operatorMessageBody,
  operatorTypingBody,
  ownerBody,
  usersQuery,
} from './schema.ts';

/** The user the path names, of the path's account (404 user_not_found otherwise). */
export async function userOfPath(ctx: AppContext, { accountId, userId }: { accountId: number; userId: number }): Promise<User> {
  const user = await findAccountUser(ctx.deps.db.orm.em, accountId, userId);
  if (!user) throw notFound('user_not_found');
  return user;
}

/** The dashboard's view of conversations (conversations:read), and answers from it (conversations:reply). */
export const userRoutes: AdminRoute[] = [
  route({
    method: 'GET',
    path: '/accounts/:accountId/users',
    rule: rule('account', 'conversations:read'),
    summary: 'Users of the account, newest first',
    params: accountIdParams,
    query: usersQuery,
    handler: async (ctx, { params: { accountId }, query }) => {
      const users = await listUsers(ctx.deps.db.orm.em, accountId, query.limit, query.before);
      respondPage(ctx, users, query.limit, presentUserSummary, (user) => user.id);
    },
  }),
  // The dashboard's list: each live conversation with its last message, by last activity.
  route({
    method: 'GET',
    path: '/accounts/:accountId/conversations',
    rule: rule('account', 'conversations:read'),
    summary: 'Live conversations of the account with their last message, by last activity (newest first; without messages last)',
    params: accountIdParams,
    query: conversationsQuery,
    handler: async (ctx, { params: { accountId }, query }) => {
      const page = await conversationsByActivity(ctx.deps.db.orm.em, accountId, query.limit, query.before);
      respond(ctx, {
        data: page.rows.map(({ user, lastMessage }) => ({
          user: presentUserSummary(user),
          lastMessage: lastMessage ? presentClientMessage(lastMessage, accountId) : null,
        })),
        extra: { paging: { before: page.next ? activityCursorText(page.next) : null } },
      });
    },
  }),
  route({
    method: 'GET',
    path: '/accounts/:accountId/users/:userId/messages',
    rule: rule('account', 'conversations:read'),
    summary: 'A conversation',
    params: accountUserParams,
    query: usersQuery,
    handler: async (ctx, { params, query }) => {
      const user = await userOfPath(ctx, params);
      const cursor = query.before ? ({ kind: 'before', id: query.before } as const) : ({ kind: 'latest' } as const);
      const { rows, olderThan } = await messagePage(ctx.deps.db.orm.em, user.id, cursor, query.limit, 'service');
      respond(ctx, {
        data: rows.map((m) => presentClientMessage(m, params.accountId)),
        extra: { paging: { before: olderThan }, agent: presentCurrentAgent(user) },
      });
    },
  }),
  // An operator-initiated changeOwner (docs/dashboard.md): a Service setting, on a conversation.
  route({
    method: 'PUT',
    path: '/accounts/:accountId/users/:userId/owner',
    rule: rule('account', 'services:edit', 'conversations:read'),
    audit: 'user.change_owner',
    summary: 'Change the owner Service (changeOwner action, initiatedBy the operator)',
    params: accountUserParams,
    body: ownerBody,
    handler: async (ctx, { params, body }) => {
      const operator = signedIn(ctx);
      const em = ctx.deps.db.orm.em;
      await userOfPath(ctx, params);
      const account = await getAccount(em, params.accountId);
      const result = await changeOwner(
        em,
        {
          account,
          initiatedBy: { operator: operator.identifier },
          userId: params.userId,
          newOwnerIdentification: body.serviceIdentification,
        },
        auditRequest(ctx),
      );
      respond(ctx, { data: { ...presentUserSummary(result.user), changed: result.changed } });
    },
  }),
  // An operator's answer: an agent message as a Service's (typeId 2, the operator as the agent),
  // through the same group-committed writer, so it reaches sockets and app devices alike.
  // The team inbox (docs/dashboard.md): answering as an agent, and typing to the customer.
  route({
    method: 'POST',
    path: '/accounts/:accountId/users/:userId/messages',
    rule: rule('account', 'conversations:reply'),
    summary: "Answer the customer as the signed-in operator: an agent message (typeId 2) like a Service's, live and pushed",
    params: accountUserParams,
    body: operatorMessageBody,
    status: 201,
    handler: async (ctx, { params: { accountId, userId }, body }) => {
      // The writer checks the user (this account's, not merged) under its lock: no read before.
      const { message } = await ctx.deps.agentMessages.send({
        accountId,
        userId,
        agent: operatorAgent(signedIn(ctx)),
        typeId: MessageType.agent,
        text: body.message ?? null,
        media: body.media ?? null,
        content: null,
      });
      respond(ctx, { data: presentClientMessage(message, accountId) }, 201);
    },
  }),
  route({
    method: 'POST',
    path: '/accounts/:accountId/users/:userId/typing',
    rule: rule('account', 'conversations:reply'),
    summary: 'The signed-in operator typing (or not) to the customer: agent typing',
    params: accountUserParams,
    body: operatorTypingBody,
    handler: async (ctx, { params, body }) => {
      await userOfPath(ctx, params);
      const updated = await setAgentTyping(ctx.deps.db.orm.em, {
        userId: params.userId,
        agent: operatorAgent(signedIn(ctx)),
        isTyping: body.isTyping,
        timeoutMs: ctx.deps.config.client.typingTimeoutMs,
      });
      respond(ctx, {
        data: { userId: params.userId, isTyping: body.isTyping, until: updated.agentTypingUntil?.toISOString() ?? null },
      });
    },
  }),
  // Erasure (GDPR): the user, their messages, files, devices and deliveries.
  route({
    method: 'DELETE',
    path: '/accounts/:accountId/users/:userId',
    rule: rule('account', 'users:delete'),
    audit: 'user.erase',
    summary: 'Erase a user (GDPR): messages, files, devices, deliveries; audited in the log',
    params: accountUserParams,
    handler: async (ctx, { params: { accountId, userId } }) => {
      const erased = await eraseUser(ctx.deps.db.orm.em, accountId, userId, auditRequest(ctx));
      if (!erased) throw notFound('user_not_found');
      // The rows are gone (committed); the bytes follow. A file that cannot be deleted now is
      // logged: no row refers to it any more, and nobody can download it.
      for (const path of erased.media) {
        await ctx.deps.media
          .delete(accountId, path)
          .catch((err: unknown) => ctx.state.log.warn({ err, path }, 'erased upload file not deleted'));
      }
      // The audit record of an erasure: who, when (the log line's time), what; no content.
      ctx.state.log.info(
        {
          audit: 'user_erased',
          operator: signedIn(ctx).identifier,
          accountId,
          userIds: erased.userIds,
          messages: erased.messages,
          files: erased.media.length,
          devices: erased.devices,
          deliveries: erased.deliveries,
          timelineLines: erased.timelineLines,
        },
        'user erased',
      );
      respond(ctx, {
        data: {
          userIds: erased.userIds,
          messages: erased.messages,
          files: erased.media.length,
          devices: erased.devices,
          deliveries: erased.deliveries,
        },
      });
    },
  }),
];
