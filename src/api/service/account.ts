// The calling Service's account as a Service needs it: its business hours (docs/service-api.md),
// so a bot can say when the team is back, at the moment given (`at`) or now.
import { z } from 'zod';
import { notFound } from '../../errors.ts';
import { respond } from '../../http/respond.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseQuery } from '../../http/validate.ts';
import { presentHours } from '../../presenters/hours.ts';
import { findAccount } from '../../tenancy/accounts.ts';
import { chatSettingsOf } from '../../tenancy/chat-settings.ts';
import { serviceCaller } from './service-access.ts';

export const hoursQuery = z.object({
  /** The moment to answer for (ISO 8601 with a zone); now when left out. */
  at: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with a zone' }).optional(),
});

export function accountRoutes(router: AppRouter): void {
  router.get('/account/hours', async (ctx) => {
    const { at } = parseQuery(ctx, hoursQuery);
    const { service } = serviceCaller(ctx);
    // Read now, not from the key's kept snapshot: an operator's change shows at once.
    const account = await findAccount(ctx.deps.db.orm.em, service.accountId);
    if (!account) throw notFound('account_not_found');
    respond(ctx, { data: presentHours(chatSettingsOf(account), at ? new Date(at) : new Date()) });
  });
}
