// The signed-in operator's own session: who they are and what they may do (the dashboard
// disables what the grants do not allow), and signing out.
import { endSession, updateProfile } from '../../tenancy/operators.ts';
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
  router.get('/session', (ctx) => {
    authorize(ctx, 'GET /session');
    // What the server allows that the dashboard tells while a setting is typed.
    const server = { privateWebhookAddresses: ctx.deps.config.webhooks.allowPrivate };
    respond(ctx, { data: { ...presentSignedIn(operatorOf(ctx)), server } });
  });

  // The operator's own display name and avatar, which their answers carry to customers.
  router.patch('/session', async (ctx) => {
    authorize(ctx, 'PATCH /session');
    const body = parseBody(ctx, profileBody);
    const me = operatorOf(ctx);
    const updated = await updateProfile(ctx.deps.db.orm.em, me.id, body);
    if (!updated) throw notFound('operator_not_found');
    const signedIn = { ...me, displayName: updated.displayName ?? null, avatarUrl: updated.avatarUrl ?? null };
    respond(ctx, { data: presentSignedIn(signedIn) });
  });

  router.delete('/session', async (ctx) => {
    authorize(ctx, 'DELETE /session');
    await endSession(ctx.deps.db.orm.em, operatorOf(ctx));
    respond(ctx, { data: null });
  });
}
