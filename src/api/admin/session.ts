// The signed-in operator's own session: who they are and what they may do (the dashboard
// disables what the grants do not allow), and signing out.
import { endSession } from '../../tenancy/operators.ts';
import { countRecoveryCodes } from '../../tenancy/two-factor.ts';
import { respond } from '../../http/respond.ts';
import type { AppContext, AppRouter } from '../../http/types.ts';
import { presentSignedIn } from '../../presenters/operator.ts';
import { authorize } from './auth.ts';

function operatorOf(ctx: AppContext) {
  const operator = ctx.state.operator;
  if (!operator) throw new Error('requireOperator() must run before admin routes');
  return operator;
}

export function sessionRoutes(router: AppRouter): void {
  router.get('/session', async (ctx) => {
    authorize(ctx, 'GET /session');
    // What the server allows that the dashboard tells while a setting is typed.
    const server = { privateWebhookAddresses: ctx.deps.config.webhooks.allowPrivate };
    const operator = operatorOf(ctx);
    const recoveryCodesLeft = operator.twoFactorEnabled ? await countRecoveryCodes(ctx.deps.db.orm.em, operator.id) : 0;
    respond(ctx, { data: { ...presentSignedIn(operator, recoveryCodesLeft), server } });
  });

  router.delete('/session', async (ctx) => {
    authorize(ctx, 'DELETE /session');
    await endSession(ctx.deps.db.orm.em, operatorOf(ctx).sessionId);
    respond(ctx, { data: null });
  });
}
