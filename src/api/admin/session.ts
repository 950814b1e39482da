// The signed-in operator's own session: who they are and what they may do (the dashboard
// disables what the grants do not allow), and signing out.
import { route, type AdminRoute } from './route.ts';
import { rule } from './policy.ts';
import { endSession, updateProfile, type AuthenticatedOperator } from '../../tenancy/operators.ts';
import { countRecoveryCodes } from '../../tenancy/two-factor.ts';
import { notFound } from '../../errors.ts';
import { profileBody } from './schema.ts';
import { respond } from '../../http/respond.ts';
import type { AppContext } from '../../http/types.ts';
import { presentSignedIn } from '../../presenters/operator.ts';
import { signedIn } from './operator-access.ts';
import { sentFields } from '../../audit/entries.ts';
import { auditedChange, auditRequest } from './audit-context.ts';

/** The signed-in operator as the dashboard shows them, with how many recovery codes they have left. */
async function presentSession(ctx: AppContext, operator: AuthenticatedOperator) {
  const recoveryCodesLeft = operator.twoFactorEnabled ? await countRecoveryCodes(ctx.deps.db.orm.em, operator.id) : 0;
  return presentSignedIn(operator, recoveryCodesLeft);
}

export const sessionRoutes: AdminRoute[] = [
  route({
    method: 'GET',
    path: '/session',
    rule: rule('session'),
    summary: 'The signed-in operator, their grants and two-factor state',
    handler: async (ctx) => {
      // What the server allows that the dashboard tells while a setting is typed.
      const server = { privateWebhookAddresses: ctx.deps.config.webhooks.allowPrivate };
      respond(ctx, { data: { ...(await presentSession(ctx, signedIn(ctx))), server } });
    },
  }),
  // The operator's own display name and avatar, which their answers carry to customers.
  route({
    method: 'PATCH',
    path: '/session',
    rule: rule('session'),
    audit: 'operator.update_profile',
    summary: "The operator's own display name and avatar (https), which their answers carry to customers",
    body: profileBody,
    handler: async (ctx, { body }) => {
      const me = signedIn(ctx);
      const updated = await auditedChange(
        ctx,
        (tx) => updateProfile(tx, me.id, body),
        (o) => o && { target: { operatorId: me.id }, changed: sentFields(body) },
      );
      if (!updated) throw notFound('operator_not_found');
      const profile = { displayName: updated.displayName ?? null, avatarUrl: updated.avatarUrl ?? null };
      respond(ctx, { data: await presentSession(ctx, { ...me, ...profile }) });
    },
  }),
  route({
    method: 'DELETE',
    path: '/session',
    rule: rule('session'),
    audit: 'sign_out',
    summary: 'Sign out: the token is refused from now on',
    handler: async (ctx) => {
      await endSession(ctx.deps.db.orm.em, signedIn(ctx), auditRequest(ctx));
      respond(ctx, { data: null });
    },
  }),
];
