// The customer asks for their conversation by email (docs/client-api.md): 202 with the address
// it goes to; 409 email_unknown without an address (PUT /users/me/contact first),
// email_unsubscribed after the unsubscribe link, conversation_empty, email_not_configured when
// this server sends no email; 429 past `email.transcriptRateLimit` per customer.
import { requestTranscript } from '../../conversations/transcript-request.ts';
import { AppError } from '../../errors.ts';
import { consumeOrRefuse } from '../../limits.ts';
import { limitWrites } from '../../http/middleware/rate-limit.ts';
import { respond } from '../../http/respond.ts';
import type { AppRouter } from '../../http/types.ts';
import { conversation } from './client-identity.ts';

export function transcriptRoutes(router: AppRouter): void {
  router.post('/users/me/transcript', limitWrites(), async (ctx) => {
    const { account, user } = conversation(ctx);
    if (!ctx.deps.config.email.smtp) throw new AppError(409, 'email_not_configured');
    const { email } = await requestTranscript(ctx.deps.db.orm.em, { accountId: account.id, userId: user.id }, () =>
      consumeOrRefuse(ctx.deps.transcriptLimiter, `${account.id}:${user.id}`),
    );
    respond(ctx, { data: { email } }, 202);
  });
}
