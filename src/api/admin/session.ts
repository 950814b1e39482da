// The signed-in operator's own session: who they are and what they may do (the dashboard
// disables what the grants do not allow), and signing out.
import { endSession, updateProfile } from '../../tenancy/operators.ts';
import { countRecoveryCodes } from '../../tenancy/two-factor.ts';
import { parseBody } from '../../http/validate.ts';
import { notFound } from '../../errors.ts';
import { profileBody } from './schema.ts';
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

  // The operator's own display name and avatar, which their answers carry to customers.
  router.patch('/session', async (ctx) => {
    authorize(ctx, 'PATCH /session');
    const body = parseBody(ctx, profileBody);
    const me = operatorOf(ctx);
    const updated = await updateProfile(ctx.deps.db.orm.em, me.id, body);
    if (!updated) throw notFound('operator_not_found');
    const signedIn = { ...me, displayName: updated.displayName ?? null, avatarUrl: updated.avatarUrl ?? null };
    const recoveryCodesLeft = me.twoFactorEnabled ? await countRecoveryCodes(ctx.deps.db.orm.em, me.id) : 0;
    respond(ctx, { data: presentSignedIn(signedIn, recoveryCodesLeft) });
  });

  router.delete('/session', async (ctx) => {
    authorize(ctx, 'DELETE /session');
    await endSession(ctx.deps.db.orm.em, operatorOf(ctx));
    respond(ctx, { data: null });
  });
}
