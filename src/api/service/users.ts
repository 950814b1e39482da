import { getService } from '../../tenancy/services.ts';
import { setAgentTyping, unsetAgent } from '../../conversations/agents.ts';
import { messagePage, type Cursor } from '../../conversations/messages.ts';
import { changeOwner } from '../../conversations/owners.ts';
import { refuseStandbyAnswer } from '../../conversations/handover.ts';
import { contactBody, setContact } from '../../conversations/contact.ts';
import { receiveUpload } from '../../http/middleware/multipart.ts';
import { respond } from '../../http/respond.ts';
import type { AppContext, AppRouter } from '../../http/types.ts';
import { parseBody, parseParams, parseQuery } from '../../http/validate.ts';
import { presentClientMessage, presentCurrentAgent } from '../../presenters/client-message.ts';
import { presentServiceUser } from '../../presenters/service-user.ts';
import { userForService } from './caller.ts';
import type { MediaKind } from '../../media/types.ts';
import { serviceCaller } from './service-access.ts';
import {
  agentMessageBody,
  ownerBody,
  refuseHttpAvatar,
  serviceMessagesQuery,
  typingBody,
  userIdParams,
  type AgentMessageBody,
} from './schema.ts';
import type { AgentContentInput } from '../../conversations/agents.ts';
import type { MessageButton } from '../../db/entities/index.ts';

function buttons(list: readonly MessageButton[] | null | undefined): MessageButton[] {
  return (list ?? []).map((b) => ({ title: b.title, payload: b.payload, type: b.type }));
}

/** The rich parts of the body, or null when it has none (a plain text or media message). */
function agentContent(body: AgentMessageBody): AgentContentInput | null {
  const content: AgentContentInput = {
    title: body.title ?? null,
    buttons: buttons(body.buttons),
    quickReplies: body.quickReplies ?? [],
    carousel: (body.carousel ?? []).map((item) => ({
      message: item.message ?? null,
      title: item.title ?? null,
      media: item.media ?? null,
      buttons: buttons(item.buttons),
    })),
  };
  const empty =
    content.title === null && content.buttons.length === 0 && content.quickReplies.length === 0 && content.carousel.length === 0;
  return empty ? null : content;
}

async function targetUser(ctx: AppContext) {
  const { userId } = parseParams(ctx, userIdParams);
  const caller = serviceCaller(ctx);
  return { caller, user: await userForService(ctx.deps.db.orm.em, caller, userId) };
}

export function userRoutes(router: AppRouter, mediaMaxBytes: Readonly<Record<MediaKind, number>>): void {
  router.get('/users/:userId', async (ctx) => {
    const { caller, user } = await targetUser(ctx);
    const owner = await getService(ctx.deps.db.orm.em, user.ownerServiceId);
    respond(ctx, { data: presentServiceUser(user, owner, caller.account.defaultServiceId ?? null) });
  });

  router.get('/users/:userId/messages', async (ctx) => {
    const { caller, user } = await targetUser(ctx);
    const query = parseQuery(ctx, serviceMessagesQuery);
    const cursor: Cursor = query.after
      ? { kind: 'after', id: query.after }
      : query.before
        ? { kind: 'before', id: query.before }
        : { kind: 'latest' };
    const em = ctx.deps.db.orm.em;
    const { rows, olderThan } = await messagePage(em, user.id, cursor, query.limit, 'service');
    respond(ctx, {
      data: rows.map((m) => presentClientMessage(m, caller.account.id)),
      extra: { paging: { before: olderThan, after: rows[0]?.id ?? null }, agent: presentCurrentAgent(user) },
    });
  });

  router.put('/users/:userId/owner', async (ctx) => {
    const body = parseBody(ctx, ownerBody);
    const { caller, user } = await targetUser(ctx);
    const result = await changeOwner(ctx.deps.db.orm.em, {
      account: caller.account,
      initiatedBy: caller.service,
      userId: user.id,
      newOwnerIdentification: body.serviceIdentification,
    });
    const owner = await getService(ctx.deps.db.orm.em, result.user.ownerServiceId);
    respond(ctx, {
      data: { ...presentServiceUser(result.user, owner, caller.account.defaultServiceId ?? null), changed: result.changed },
    });
  });

  // The customer's backend knows who signed in: its contact details win over the customer's own.
  router.put('/users/:userId/contact', async (ctx) => {
    const contact = parseBody(ctx, contactBody);
    const { caller, user } = await targetUser(ctx);
    const updated = await setContact(ctx.deps.db.orm.em, { accountId: caller.account.id, userId: user.id, source: 'service', contact });
    const owner = await getService(ctx.deps.db.orm.em, updated.ownerServiceId);
    respond(ctx, { data: presentServiceUser(updated, owner, caller.account.defaultServiceId ?? null) });
  });

  router.post('/users/:userId/messages', async (ctx) => {
    const body = parseBody(ctx, agentMessageBody);
    refuseHttpAvatar(body.agent, ctx.deps.config.webhooks.allowPrivate);
    const { userId } = parseParams(ctx, userIdParams);
    const caller = serviceCaller(ctx);
    // Asked here first so that the usual Service, not on standby, does not wait on a promise for nothing.
    if (caller.service.standby !== 'none') await refuseStandbyAnswer(ctx.deps.db.orm.em, caller.service, userId);
    // The writer checks the user (this account's, not merged) under its lock: no read before.
    const { message } = await ctx.deps.agentMessages.send({
      accountId: caller.account.id,
      userId,
      agent: { id: body.agent.id, name: body.agent.name, avatar: body.agent.avatar ?? null },
      typeId: body.typeId,
      text: body.message ?? null,
      media: body.media ?? null,
      content: agentContent(body),
    });
    respond(ctx, { data: presentClientMessage(message, caller.account.id) }, 201);
  });

  router.post('/users/:userId/typing', async (ctx) => {
    const body = parseBody(ctx, typingBody);
    refuseHttpAvatar(body.agent, ctx.deps.config.webhooks.allowPrivate);
    const { caller, user } = await targetUser(ctx);
    await refuseStandbyAnswer(ctx.deps.db.orm.em, caller.service, user.id);
    const updated = await setAgentTyping(ctx.deps.db.orm.em, {
      userId: user.id,
      agent: { id: body.agent.id, name: body.agent.name, avatar: body.agent.avatar ?? null },
      isTyping: body.isTyping,
      timeoutMs: ctx.deps.config.client.typingTimeoutMs,
    });
    respond(ctx, { data: { userId: updated.id, isTyping: body.isTyping, until: updated.agentTypingUntil?.toISOString() ?? null } });
  });

  // The user and the account's quota before the body is read; no lock until the file is judged.
  router.post('/users/:userId/media', async (ctx) => {
    const media = await receiveUpload(ctx, mediaMaxBytes, async () => {
      const { caller, user } = await targetUser(ctx);
      return { account: caller.account, user, deviceId: null };
    });
    respond(ctx, { data: { media: media.id } }, 201);
  });

  router.put('/users/:userId/agent/unset', async (ctx) => {
    const { user } = await targetUser(ctx);
    const updated = await unsetAgent(ctx.deps.db.orm.em, user.id);
    respond(ctx, { data: { userId: updated.id, agent: null } });
  });
}
