// The customer's own contact details (docs/client-api.md): the address answers are emailed to
// when they have left. A contact set by the customer's backend (Service API) wins: the
// customer's PUT is then refused with 409 contact_set_by_service.
import { findAccountUser } from '../../conversations/lookups.ts';
import { contactBody, setContact } from '../../conversations/contact.ts';
import { notFound } from '../../errors.ts';
import { limitWrites } from '../../http/middleware/rate-limit.ts';
import { respond } from '../../http/respond.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseBody } from '../../http/validate.ts';
import { presentContact } from '../../presenters/contact.ts';
import { conversation } from './client-identity.ts';

const NONE = { email: null, name: null, language: null, source: null, updatedAt: null, emailUnsubscribed: false };

export function contactRoutes(router: AppRouter): void {
  router.get('/users/me/contact', async (ctx) => {
    const { account, user } = conversation(ctx);
    const found = await findAccountUser(ctx.deps.db.orm.em, account.id, user.id);
    if (!found) throw notFound('user_not_found');
    respond(ctx, { data: presentContact(found) ?? NONE });
  });

  router.put('/users/me/contact', limitWrites(), async (ctx) => {
    const contact = parseBody(ctx, contactBody);
    const { account, user } = conversation(ctx);
    const updated = await setContact(ctx.deps.db.orm.em, { accountId: account.id, userId: user.id, source: 'client', contact });
    respond(ctx, { data: presentContact(updated) ?? NONE });
  });
}
