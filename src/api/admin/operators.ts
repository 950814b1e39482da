import { route, type AdminRoute } from './route.ts';
import { rule } from './policy.ts';
import {
  createOperator,
  endSessionOf,
  endSessions,
  listOperators,
  listSessions,
  replaceGrants,
  setOperatorDisabled,
  operatorExists,
  type OperatorWithGrants,
} from '../../tenancy/operators.ts';
import { createPasswordReset, passwordResetUrl } from '../../tenancy/password-resets.ts';
import type { Grant } from '../../tenancy/permissions.ts';
import { allows, isPermission } from '../../tenancy/permissions.ts';
import { respond } from '../../http/respond.ts';
import { conflict, notFound } from '../../errors.ts';
import { presentOperator, presentOperatorSession } from '../../presenters/operator.ts';
import type { AppContext } from '../../http/types.ts';
import { auditedChange, auditRequest } from './audit-context.ts';
import { signedIn } from './operator-access.ts';
import { createOperatorBody, grantsBody, operatorDisabledBody, operatorIdParams, operatorSessionParams } from './schema.ts';

/** The schema checked each permission; this narrows the type for the domain. */
function toGrants(grants: Array<{ permission: string; accountId: number | null }>): Grant[] {
  return grants.flatMap((g) => (isPermission(g.permission) ? [{ permission: g.permission, accountId: g.accountId }] : []));
}

/** The operator with their grants after a change, or 404 operator_not_found when there was none to change. */
function respondChanged(ctx: AppContext, updated: OperatorWithGrants | null): void {
  if (!updated) throw notFound('operator_not_found');
  respond(ctx, { data: presentOperator(updated.operator, updated.grants) });
}

/** Ends one session of the operator, audited; 404 session_not_found when they have no such session. */
export async function endOneSession(ctx: AppContext, operatorId: number, sessionId: number): Promise<void> {
  const ended = await auditedChange(
    ctx,
    (tx) => endSessionOf(tx, operatorId, sessionId),
    (done) => done && { target: { operatorId, sessionId } },
  );
  if (!ended) throw notFound('session_not_found');
}

/** 404 operator_not_found for an operator id nobody has. */
async function refuseUnknown(ctx: AppContext, operatorId: number): Promise<void> {
  if (!(await operatorExists(ctx.deps.db.orm.em, operatorId))) throw notFound('operator_not_found');
}

export const operatorRoutes: AdminRoute[] = [
  route({
    method: 'GET',
    path: '/operators',
    rule: rule('everywhere', 'operators:manage'),
    summary: 'Operators and their grants',
    handler: async (ctx) => {
      const operators = await listOperators(ctx.deps.db.orm.em);
      respond(ctx, { data: operators.map((o) => presentOperator(o.operator, o.grants)) });
    },
  }),
  route({
    method: 'POST',
    path: '/operators',
    rule: rule('everywhere', 'operators:manage'),
    audit: 'operator.create',
    summary: 'Create an operator',
    body: createOperatorBody,
    status: 201,
    handler: async (ctx, { body }) => {
      const grants = toGrants(body.grants);
      const hashCost = ctx.deps.config.security.passwordHashCost;
      const operator = await auditedChange(
        ctx,
        (tx) => createOperator(tx, { email: body.email, password: body.password, grants, hashCost }),
        (o) => ({ target: { operatorId: o.id }, changed: ['email', 'password', 'grants'] }),
      );
      respond(ctx, { data: presentOperator(operator, grants) }, 201);
    },
  }),
  route({
    method: 'PUT',
    path: '/operators/:operatorId/grants',
    rule: rule('everywhere', 'operators:manage'),
    audit: 'operator.set_grants',
    summary: "Replace an operator's grants; one's own keep operators:manage everywhere (409 cannot_remove_own_operators_manage)",
    params: operatorIdParams,
    body: grantsBody,
    handler: async (ctx, { params: { operatorId }, body }) => {
      const grants = toGrants(body.grants);
      // As with disabling oneself: the last operator who manages operators must not lock everyone out.
      if (operatorId === signedIn(ctx).id && !allows(grants, 'operators:manage', null)) {
        throw conflict('cannot_remove_own_operators_manage');
      }
      respondChanged(ctx, await replaceGrants(ctx.deps.db.orm.em, operatorId, grants, auditRequest(ctx)));
    },
  }),
  route({
    method: 'PUT',
    path: '/operators/:operatorId/disabled',
    rule: rule('everywhere', 'operators:manage'),
    audit: 'operator.set_disabled',
    summary: 'Disable an operator (no sign-in, sessions ended) or enable them again; not oneself (409 cannot_disable_self)',
    params: operatorIdParams,
    body: operatorDisabledBody,
    handler: async (ctx, { params: { operatorId }, body }) => {
      // Nobody locks themselves out: another operator managing operators has to do it.
      if (body.disabled && operatorId === signedIn(ctx).id) throw conflict('cannot_disable_self');
      respondChanged(ctx, await setOperatorDisabled(ctx.deps.db.orm.em, operatorId, body.disabled, auditRequest(ctx)));
    },
  }),
  // A one-time link to set a new password, shown once to the operator who asked (no email is sent).
  // The link sets the operator's password: as much as making an operator.
  route({
    method: 'POST',
    path: '/operators/:operatorId/password-reset',
    rule: rule('everywhere', 'operators:manage'),
    audit: 'password_reset.create',
    summary: "A one-time link that sets the operator's password, shown once (no email is sent)",
    params: operatorIdParams,
    status: 201,
    handler: async (ctx, { params: { operatorId } }) => {
      const ttlSeconds = ctx.deps.config.admin.passwordResetTtlSeconds;
      const reset = await createPasswordReset(ctx.deps.db.orm.em, operatorId, ttlSeconds, auditRequest(ctx));
      if (!reset) throw notFound('operator_not_found');
      const url = passwordResetUrl(ctx.deps.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`, reset.token);
      respond(ctx, { data: { url, expiresAt: reset.expiresAt.toISOString() } }, 201);
    },
  }),
  route({
    method: 'GET',
    path: '/operators/:operatorId/sessions',
    rule: rule('everywhere', 'operators:manage'),
    summary: "An operator's sessions that have not expired",
    params: operatorIdParams,
    handler: async (ctx, { params: { operatorId } }) => {
      await refuseUnknown(ctx, operatorId);
      const sessions = await listSessions(ctx.deps.db.orm.em, operatorId);
      respond(ctx, { data: sessions.map((s) => presentOperatorSession(s, signedIn(ctx).sessionId)) });
    },
  }),
  route({
    method: 'DELETE',
    path: '/operators/:operatorId/sessions',
    rule: rule('everywhere', 'operators:manage'),
    audit: 'session.end_all',
    summary: 'End every session of an operator: {ended}',
    params: operatorIdParams,
    handler: async (ctx, { params: { operatorId } }) => {
      await refuseUnknown(ctx, operatorId);
      const ended = await auditedChange(
        ctx,
        (tx) => endSessions(tx, operatorId),
        (n) => ({ target: { operatorId }, changed: n > 0 ? ['sessions'] : [] }),
      );
      respond(ctx, { data: { ended } });
    },
  }),
  route({
    method: 'DELETE',
    path: '/operators/:operatorId/sessions/:sessionId',
    rule: rule('everywhere', 'operators:manage'),
    audit: 'session.end',
    summary: 'End one session of an operator',
    params: operatorSessionParams,
    handler: async (ctx, { params: { operatorId, sessionId } }) => {
      await endOneSession(ctx, operatorId, sessionId);
      respond(ctx, { data: null });
    },
  }),
];
