// A conversation's switchboard for the dashboard: its active, pending and standby Services.
import { handoverState } from '../../conversations/handover.ts';
import { findAccountUser } from '../../conversations/lookups.ts';
import { notFound } from '../../errors.ts';
import { presentHandoverState } from '../../presenters/handover.ts';
import { respond } from '../../http/respond.ts';
import { parseParams } from '../../http/validate.ts';
import { getAccount } from '../../tenancy/accounts.ts';
import { authorize } from './operator-access.ts';
import { rule } from './policy.ts';
import type { AdminRoute } from './route.ts';
import { accountUserParams } from './schema.ts';

export const handoverRoutes: AdminRoute[] = [
  // Which Services are active, offered it and listening: read as the conversation is.
  {
    method: 'GET',
    path: '/accounts/:accountId/users/:userId/handover',
    rule: rule('account', 'conversations:read'),
    summary: "A conversation's switchboard: the active Service, a pending offer, the standby Services",
    params: accountUserParams,
    handler: async (ctx) => {
      const { accountId, userId } = parseParams(ctx, accountUserParams);
      authorize(ctx, accountId);
      const em = ctx.deps.db.orm.em;
      const user = await findAccountUser(em, accountId, userId);
      if (!user) throw notFound('user_not_found');
      const account = await getAccount(em, accountId);
      respond(ctx, { data: presentHandoverState(await handoverState(em, user), account.defaultServiceId ?? null) });
    },
  },
];
