import type { AdminRoute } from './route.ts';
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
} from '../../tenancy/operators.ts';
import { createPasswordReset, passwordResetUrl } from '../../tenancy/password-resets.ts';
import type { Grant } from '../../tenancy/permissions.ts';
import { allows, isPermission } from '../../tenancy/permissions.ts';
import { respond } from '../../http/respond.ts';
import { conflict, notFound } from '../../errors.ts';
import { parseBody, parseParams } from '../../http/validate.ts';
import { presentOperator, presentOperatorSession } from '../../presenters/operator.ts';
import { audited } from '../../audit/entries.ts';
import { auditRequest } from './audit-context.ts';
import { authorize } from './operator-access.ts';
import { createOperatorBody, grantsBody, operatorDisabledBody, operatorIdParams, operatorSessionParams } from './schema.ts';

/** The schema checked each permission; this narrows the type for the domain. */
function toGrants(grants: Array<{ permission: string; accountId: number | null }>): Grant[] {
  return grants.flatMap((g) => (isPermission(g.permission) ? [{ permission: g.permission, accountId: g.accountId }] : []));
}

export const operatorRoutes: AdminRoute[] = [
  {
    method: 'GET',
    path: '/operators',
    rule: rule('everywhere', 'operators:manage'),
    summary: 'Operators and their grants',
    handler: async (ctx) => {
      authorize(ctx);
      const operators = await listOperators(ctx.deps.db.orm.em);
      respond(ctx, { data: operators.map((o) => presentOperator(o.operator, o.grants)) });
    },
  },
  {
    method: 'POST',
    path: '/operators',
    rule: rule('everywhere', 'operators:manage'),
    audit: 'operator.create',
    summary: 'Create an operator',
    body: createOperatorBody,
    status: 201,
    handler: async (ctx) => {
      authorize(ctx);
      const body = parseBody(ctx, createOperatorBody);
      const grants = toGrants(body.grants);
      const operator = await audited(
        ctx.deps.db.orm.em,
        auditRequest(ctx),
        (tx) =>
          createOperator(tx, {
            email: body.email,
            password: body.password,
            grants,
            hashCost: ctx.deps.config.security.passwordHashCost,
          }),
        (o) => ({ target: { operatorId: o.id }, changed: ['email', 'password', 'grants'] }),
      );
      respond(ctx, { data: presentOperator(operator, grants) }, 201);
    },
  },
  {
    method: 'PUT',
    path: '/operators/:operatorId/grants',
    rule: rule('everywhere', 'operators:manage'),
    audit: 'operator.set_grants',
    summary: "Replace an operator's grants; one's own keep operators:manage everywhere (409 cannot_remove_own_operators_manage)",
    params: operatorIdParams,
    body: grantsBody,
    handler: async (ctx) => {
      authorize(ctx);
      const { operatorId } = parseParams(ctx, operatorIdParams);
      const body = parseBody(ctx, grantsBody);
      const grants = toGrants(body.grants);
      // As with disabling oneself: the last operator who manages operators must not lock everyone out.
      if (operatorId === ctx.state.operator?.id && !allows(grants, 'operators:manage', null)) {
        throw conflict('cannot_remove_own_operators_manage');
      }
      const updated = await replaceGrants(ctx.deps.db.orm.em, operatorId, grants, auditRequest(ctx));
      if (!updated) throw notFound('operator_not_found');
      respond(ctx, { data: presentOperator(updated.operator, updated.grants) });
    },
  },
  {
    method: 'PUT',
    path: '/operators/:operatorId/disabled',
    rule: rule('everywhere', 'operators:manage'),
    audit: 'operator.set_disabled',
    summary: 'Disable an operator (no sign-in, sessions ended) or enable them again; not oneself (409 cannot_disable_self)',
    params: operatorIdParams,
    body: operatorDisabledBody,
    handler: async (ctx) => {
      authorize(ctx);
      const { operatorId } = parseParams(ctx, operatorIdParams);
      const body = parseBody(ctx, operatorDisabledBody);
      // Nobody locks themselves out: another operator managing operators has to do it.
      if (body.disabled && operatorId === ctx.state.operator?.id) throw conflict('cannot_disable_self');
      const updated = await setOperatorDisabled(ctx.deps.db.orm.em, operatorId, body.disabled, auditRequest(ctx));
      if (!updated) throw notFound('operator_not_found');
      respond(ctx, { data: presentOperator(updated.operator, updated.grants) });
    },
  },
  // A one-time link to set a new password, shown once to the operator who asked (no email is sent).
  // The link sets the operator's password: as much as making an operator.
  {
    method: 'POST',
    path: '/operators/:operatorId/password-reset',
    rule: rule('everywhere', 'operators:manage'),
    audit: 'password_reset.create',
    summary: "A one-time link that sets the operator's password, shown once (no email is sent)",
    params: operatorIdParams,
    status: 201,
    handler: async (ctx) => {
      authorize(ctx);
      const { operatorId } = parseParams(ctx, operatorIdParams);
      const reset = await createPasswordReset(
        ctx.deps.db.orm.em,
        operatorId,
        ctx.deps.config.admin.passwordResetTtlSeconds,
        auditRequest(ctx),
      );
      if (!reset) throw notFound('operator_not_found');
      const url = passwordResetUrl(ctx.deps.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`, reset.token);
      respond(ctx, { data: { url, expiresAt: reset.expiresAt.toISOString() } }, 201);
    },
  },
  {
    method: 'GET',
    path: '/operators/:operatorId/sessions',
    rule: rule('everywhere', 'operators:manage'),
    summary: "An operator's sessions that have not expired",
    params: operatorIdParams,
    handler: async (ctx) => {
      authorize(ctx);
      const { operatorId } = parseParams(ctx, operatorIdParams);
      const em = ctx.deps.db.orm.em;
      if (!(await operatorExists(em, operatorId))) throw notFound('operator_not_found');
      const sessions = await listSessions(em, operatorId);
      respond(ctx, { data: sessions.map((s) => presentOperatorSession(s, ctx.state.operator?.sessionId ?? null)) });
    },
  },
  {
    method: 'DELETE',
    path: '/operators/:operatorId/sessions',
    rule: rule('everywhere', 'operators:manage'),
    audit: 'session.end_all',
    summary: 'End every session of an operator: {ended}',
    params: operatorIdParams,
    handler: async (ctx) => {
      authorize(ctx);
      const { operatorId } = parseParams(ctx, operatorIdParams);
      const em = ctx.deps.db.orm.em;
      if (!(await operatorExists(em, operatorId))) throw notFound('operator_not_found');
      respond(ctx, {
        data: {
          ended: await audited(
            em,
            auditRequest(ctx),
            (tx) => endSessions(tx, operatorId),
            (ended) => ({ target: { operatorId }, changed: ended > 0 ? ['sessions'] : [] }),
          ),
        },
      });
    },
  },
  {
    method: 'DELETE',
    path: '/operators/:operatorId/sessions/:sessionId',
    rule: rule('everywhere', 'operators:manage'),
    audit: 'session.end',
    summary: 'End one session of an operator',
    params: operatorSessionParams,
    handler: async (ctx) => {
      authorize(ctx);
      const { operatorId, sessionId } = parseParams(ctx, operatorSessionParams);
      if (
        !(await audited(
          ctx.deps.db.orm.em,
          auditRequest(ctx),
          (tx) => endSessionOf(tx, operatorId, sessionId),
          (ended) => ended && { target: { operatorId, sessionId } },
        ))
      )
        throw notFound('session_not_found');
      respond(ctx, { data: null });
    },
  },
];
