import { createOperator, listOperators, replaceGrants, setOperatorDisabled } from '../../tenancy/operators.ts';
import type { Grant } from '../../tenancy/permissions.ts';
import { allows, isPermission } from '../../tenancy/permissions.ts';
import { respond } from '../../http/respond.ts';
import { conflict, notFound } from '../../errors.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseBody, parseParams } from '../../http/validate.ts';
import { presentOperator } from '../../presenters/operator.ts';
import { authorize } from './auth.ts';
import { createOperatorBody, grantsBody, operatorDisabledBody, operatorIdParams } from './schema.ts';

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
    const operator = await createOperator(ctx.deps.db.orm.em, { email: body.email, password: body.password, grants });
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
}
