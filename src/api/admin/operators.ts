import {
  createOperator,
  endSessionOf,
  endSessions,
  listOperators,
  listSessions,
  replaceGrants,
  setOperatorDisabled,
} from '../../tenancy/operators.ts';
import { createPasswordReset, passwordResetUrl } from '../../tenancy/password-resets.ts';
import { OperatorSchema } from '../../db/entities/index.ts';
import type { Grant } from '../../tenancy/permissions.ts';
import { allows, isPermission } from '../../tenancy/permissions.ts';
import { respond } from '../../http/respond.ts';
import { conflict, notFound } from '../../errors.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseBody, parseParams } from '../../http/validate.ts';
import { presentOperator, presentOperatorSession } from '../../presenters/operator.ts';
import { authorize } from './auth.ts';
import { createOperatorBody, grantsBody, operatorDisabledBody, operatorIdParams, operatorSessionParams } from './schema.ts';

/** The schema checked each permission; this narrows the type for the domain. */
function toGrants(grants: Array<{ permission: string; accountId: number | null }>): Grant[] {
  return grants.flatMap((g) => (isPermission(g.permission) ? [{ permission: g.permission, accountId: g.accountId }] : []));
}

export function operatorRoutes(router: AppRouter): void {
  router.get('/operators', async (ctx) => {
    authorize(ctx, 'GET /operators');
    const operators = await listOperators(ctx.deps.db.orm.em);
    respond(ctx, { data: operators.map((o) => presentOperator(o.operator, o.grants)) });
  });

  router.post('/operators', async (ctx) => {
    authorize(ctx, 'POST /operators');
    const body = parseBody(ctx, createOperatorBody);
    const grants = toGrants(body.grants);
    const operator = await createOperator(ctx.deps.db.orm.em, {
      email: body.email,
      password: body.password,
      grants,
      hashCost: ctx.deps.config.security.passwordHashCost,
    });
    respond(ctx, { data: presentOperator(operator, grants) }, 201);
  });

  router.put('/operators/:operatorId/grants', async (ctx) => {
    authorize(ctx, 'PUT /operators/:operatorId/grants');
    const { operatorId } = parseParams(ctx, operatorIdParams);
    const body = parseBody(ctx, grantsBody);
    const grants = toGrants(body.grants);
    // As with disabling oneself: the last operator who manages operators must not lock everyone out.
    if (operatorId === ctx.state.operator?.id && !allows(grants, 'operators:manage', null)) {
      throw conflict('cannot_remove_own_operators_manage');
    }
    const updated = await replaceGrants(ctx.deps.db.orm.em, operatorId, grants);
    if (!updated) throw notFound('operator_not_found');
    respond(ctx, { data: presentOperator(updated.operator, updated.grants) });
  });

  router.put('/operators/:operatorId/disabled', async (ctx) => {
    authorize(ctx, 'PUT /operators/:operatorId/disabled');
    const { operatorId } = parseParams(ctx, operatorIdParams);
    const body = parseBody(ctx, operatorDisabledBody);
    // Nobody locks themselves out: another operator managing operators has to do it.
    if (body.disabled && operatorId === ctx.state.operator?.id) throw conflict('cannot_disable_self');
    const updated = await setOperatorDisabled(ctx.deps.db.orm.em, operatorId, body.disabled);
    if (!updated) throw notFound('operator_not_found');
    respond(ctx, { data: presentOperator(updated.operator, updated.grants) });
  });

  // A one-time link to set a new password, shown once to the operator who asked (no email is sent).
  router.post('/operators/:operatorId/password-reset', async (ctx) => {
    authorize(ctx, 'POST /operators/:operatorId/password-reset');
    const { operatorId } = parseParams(ctx, operatorIdParams);
    const reset = await createPasswordReset(ctx.deps.db.orm.em, operatorId, ctx.deps.config.admin.passwordResetTtlSeconds);
    if (!reset) throw notFound('operator_not_found');
    const url = passwordResetUrl(ctx.deps.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`, reset.token);
    respond(ctx, { data: { url, expiresAt: reset.expiresAt.toISOString() } }, 201);
  });

  router.get('/operators/:operatorId/sessions', async (ctx) => {
    authorize(ctx, 'GET /operators/:operatorId/sessions');
    const { operatorId } = parseParams(ctx, operatorIdParams);
    const em = ctx.deps.db.orm.em;
    if (!(await em.count(OperatorSchema, { id: operatorId }))) throw notFound('operator_not_found');
    const sessions = await listSessions(em, operatorId);
    respond(ctx, { data: sessions.map((s) => presentOperatorSession(s, ctx.state.operator?.sessionId ?? null)) });
  });

  router.delete('/operators/:operatorId/sessions', async (ctx) => {
    authorize(ctx, 'DELETE /operators/:operatorId/sessions');
    const { operatorId } = parseParams(ctx, operatorIdParams);
    const em = ctx.deps.db.orm.em;
    if (!(await em.count(OperatorSchema, { id: operatorId }))) throw notFound('operator_not_found');
    respond(ctx, { data: { ended: await endSessions(em, operatorId) } });
  });

  router.delete('/operators/:operatorId/sessions/:sessionId', async (ctx) => {
    authorize(ctx, 'DELETE /operators/:operatorId/sessions/:sessionId');
    const { operatorId, sessionId } = parseParams(ctx, operatorSessionParams);
    if (!(await endSessionOf(ctx.deps.db.orm.em, operatorId, sessionId))) throw notFound('session_not_found');
    respond(ctx, { data: null });
  });
}
