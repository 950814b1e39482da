// A conversation's switchboard for the dashboard: its active, pending and standby Services.
import { handoverState } from '../../conversations/handover.ts';
import { AccountSchema, UserSchema } from '../../db/entities/index.ts';
import { notFound } from '../../errors.ts';
import { presentHandoverState } from '../../presenters/handover.ts';
import { respond } from '../../http/respond.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';
import { authorize } from './auth.ts';
import { accountUserParams } from './schema.ts';

export function handoverRoutes(router: AppRouter): void {
  router.get('/accounts/:accountId/users/:userId/handover', async (ctx) => {
    const { accountId, userId } = parseParams(ctx, accountUserParams);
    authorize(ctx, 'GET /accounts/:accountId/users/:userId/handover', accountId);
    const em = ctx.deps.db.orm.em;
    const user = await em.findOne(UserSchema, { id: userId, accountId });
    if (!user) throw notFound('user_not_found');
    const account = await em.findOneOrFail(AccountSchema, { id: accountId });
    respond(ctx, { data: presentHandoverState(await handoverState(em, user), account.defaultServiceId ?? null) });
  });
}
