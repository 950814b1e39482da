// A conversation's switchboard for the dashboard: its active, pending and standby Services.
import { handoverState } from '../../conversations/handover.ts';
import { presentHandoverState } from '../../presenters/handover.ts';
import { respond } from '../../http/respond.ts';
import { getAccount } from '../../tenancy/accounts.ts';
import { rule } from './policy.ts';
import { route, type AdminRoute } from './route.ts';
import { accountUserParams } from './schema.ts';
import { userOfPath } from './users.ts';

export const handoverRoutes: AdminRoute[] = [
  // Which Services are active, offered it and listening: read as the conversation is.
  route({
    method: 'GET',
    path: '/accounts/:accountId/users/:userId/handover',
    rule: rule('account', 'conversations:read'),
    summary: "A conversation's switchboard: the active Service, a pending offer, the standby Services",
    params: accountUserParams,
    handler: async (ctx, { params }) => {
      const em = ctx.deps.db.orm.em;
      const user = await userOfPath(ctx, params);
      const account = await getAccount(em, params.accountId);
      respond(ctx, { data: presentHandoverState(await handoverState(em, user), account.defaultServiceId ?? null) });
    },
  }),
];
