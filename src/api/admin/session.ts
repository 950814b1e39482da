// The signed-in operator's own session: who they are and what they may do (the dashboard
// disables what the grants do not allow), and signing out.
import type { AdminRoute } from './route.ts';
import { rule } from './policy.ts';
import { endSession, updateProfile } from '../../tenancy/operators.ts';
import { countRecoveryCodes } from '../../tenancy/two-factor.ts';
import { parseBody } from '../../http/validate.ts';
import { notFound } from '../../errors.ts';
import { profileBody } from './schema.ts';
import { respond } from '../../http/respond.ts';
import type { AppContext } from '../../http/types.ts';
import { presentSignedIn } from '../../presenters/operator.ts';
import { authorize } from './operator-access.ts';
import { audited, sentFields } from '../../audit/entries.ts';
import { auditRequest } from './audit-context.ts';

function operatorOf(ctx: AppContext) {
  const operator = ctx.state.operator;
  if (!operator) throw new Error('requireOperator() must run before admin routes');
  return operator;
}

export const sessionRoutes: AdminRoute[] = [
  {
    method: 'GET',
    path: '/session',
    rule: rule('session'),
    summary: 'The signed-in operator, their grants and two-factor state',
    handler: async (ctx) => {
      authorize(ctx);
      // What the server allows that the dashboard tells while a setting is typed.
      const server = { privateWebhookAddresses: ctx.deps.config.webhooks.allowPrivate };
      const operator = operatorOf(ctx);
      const recoveryCodesLeft = operator.twoFactorEnabled ? await countRecoveryCodes(ctx.deps.db.orm.em, operator.id) : 0;
      respond(ctx, { data: { ...presentSignedIn(operator, recoveryCodesLeft), server } });
    },
  },
  // The operator's own display name and avatar, which their answers carry to customers.
  // One's own display name and avatar.
  {
    method: 'PATCH',
    path: '/session',
    rule: rule('session'),
    audit: 'operator.update_profile',
    summary: "The operator's own display name and avatar (https), which their answers carry to customers",
    body: profileBody,
    handler: async (ctx) => {
      authorize(ctx);
      const body = parseBody(ctx, profileBody);
      const me = operatorOf(ctx);
      const updated = await audited(
        ctx.deps.db.orm.em,
        auditRequest(ctx),
        (tx) => updateProfile(tx, me.id, body),
        (o) => o && { target: { operatorId: me.id }, changed: sentFields(body) },
      );
      if (!updated) throw notFound('operator_not_found');
      const signedIn = { ...me, displayName: updated.displayName ?? null, avatarUrl: updated.avatarUrl ?? null };
      const recoveryCodesLeft = me.twoFactorEnabled ? await countRecoveryCodes(ctx.deps.db.orm.em, me.id) : 0;
      respond(ctx, { data: presentSignedIn(signedIn, recoveryCodesLeft) });
    },
  },
  {
    method: 'DELETE',
    path: '/session',
    rule: rule('session'),
    audit: 'sign_out',
    summary: 'Sign out: the token is refused from now on',
    handler: async (ctx) => {
      authorize(ctx);
      await endSession(ctx.deps.db.orm.em, operatorOf(ctx), auditRequest(ctx));
      respond(ctx, { data: null });
    },
  },
];
