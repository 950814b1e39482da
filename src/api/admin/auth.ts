import type { Middleware } from 'koa';
import { authenticateOperator } from '../../tenancy/operators.ts';
import { allows, type Permission } from '../../tenancy/permissions.ts';
import { forbidden, unauthorized } from '../../errors.ts';
import type { AppContext, AppContextExtras, AppState } from '../../http/types.ts';

/** `Authorization: Bearer <token>` from POST /adminApi/login. */
export function requireOperator(): Middleware<AppState, AppContextExtras> {
  return async (ctx, next) => {
    const match = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'));
    if (!match?.[1]) throw unauthorized('missing_token');
    const operator = await authenticateOperator(ctx.deps.db.orm.em, match[1]);
    if (!operator) throw unauthorized('invalid_token');
    ctx.state.operator = operator;
    await next();
  };
}

/** Asserts the signed-in operator holds `permission` for the account (or everywhere, when null). */
export function authorize(ctx: AppContext, permission: Permission, accountId: number | null): void {
  const operator = ctx.state.operator;
  if (!operator) throw unauthorized('missing_token');
  if (!allows(operator.grants, permission, accountId)) throw forbidden('permission_denied');
}
