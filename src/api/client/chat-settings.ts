// What the widget reads besides the conversation (docs/widget.md): the account's pre-chat form,
// usual reply time and whether the team is in now (GET /chat-settings, any device, registered
// or not), and the way back from an email link (POST /conversation-link, docs/security.md).
import { z } from 'zod';
import { redeemConversationLink } from '../../conversations/conversation-links.ts';
import { verifyLink } from '../../email/links.ts';
import { notFound } from '../../errors.ts';
import { limitWrites } from '../../http/middleware/rate-limit.ts';
import { respond } from '../../http/respond.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseBody } from '../../http/validate.ts';
import { presentWidgetSettings } from '../../presenters/hours.ts';
import { chatSettingsOf } from '../../tenancy/chat-settings.ts';
import { caller } from './client-identity.ts';

export const conversationLinkBody = z
  .object({
    token: z.string().min(1).max(2000),
    /** A fresh device id for this browser, used when the conversation is another device's. */
    deviceId: z
      .string()
      .regex(/^[\x21-\x7e]{10,255}$/, 'must be 10 to 255 printable characters without spaces')
      .optional(),
  })
  .strict();

export function chatSettingsRoutes(router: AppRouter): void {
  router.get('/chat-settings', (ctx) => {
    const { account } = caller(ctx);
    ctx.set('cache-control', 'no-store');
    respond(ctx, { data: presentWidgetSettings(chatSettingsOf(account), new Date()) });
  });

  router.post('/conversation-link', limitWrites(), async (ctx) => {
    const body = parseBody(ctx, conversationLinkBody);
    const { account, deviceId } = caller(ctx);
    const secret = ctx.deps.config.email.linkSecret;
    const claims = secret ? verifyLink(secret, body.token, 'conversation') : null;
    if (!claims) throw notFound('link_not_found');
    const outcome = await redeemConversationLink(ctx.deps.db.orm.em, { account, claims, deviceId, newDeviceId: body.deviceId });
    respond(ctx, { data: { outcome, deviceId: outcome === 'device' ? body.deviceId : deviceId } });
  });
}
