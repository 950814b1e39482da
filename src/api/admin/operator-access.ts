import type { Middleware } from 'koa';
import { authenticateOperator, type AuthenticatedOperator } from '../../tenancy/operators.ts';
import { allowsAll, allowsSomewhere, type Grant } from '../../tenancy/permissions.ts';
import { forbidden, unauthorized, type AppError } from '../../errors.ts';
import type { AppContext, AppContextExtras, AppState } from '../../http/types.ts';
import type { Rule } from './policy.ts';
import { routeName } from './route.ts';

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

/** The operator requireOperator() found, for the routes behind it. */
export function signedIn(ctx: AppContext): AuthenticatedOperator {
  const operator = ctx.state.operator;
  if (!operator) throw new Error('requireOperator() must run before admin routes');
  return operator;
}

/** The rule of the route being served (its declaration, which routers.ts puts in the state). */
function ruleOf(ctx: AppContext): { rule: Rule; grants: readonly Grant[]; route: string } {
  const operator = ctx.state.operator;
  if (!operator) throw unauthorized('missing_token');
  const declared = ctx.state.adminRoute;
  if (!declared || declared.rule === 'public') throw new Error(`${ctx.method} ${String(ctx._matchedRoute)} has no rule to check`);
  return { rule: declared.rule, grants: operator.grants, route: routeName(declared) };
}

/**
 * Asserts the signed-in operator may call the route being served (its rule, policy.ts): everywhere, or on the account
 * named in the path. 403 permission_denied otherwise.
 */
export function authorize(ctx: AppContext, accountId: number | null = null): void {
  const { rule, grants, route } = ruleOf(ctx);
  if (rule.scope === 'record') throw new Error(`${route} names a record: authorizeRecord()`);
  if (rule.scope === 'listing') throw new Error(`${route} lists accounts: authorizeListing()`);
  if (rule.scope === 'account' && accountId === null) throw new Error(`${route} needs the account of its path`);
  if (!allowsAll(grants, rule.permissions, rule.scope === 'everywhere' ? null : accountId)) {
    throw forbidden('permission_denied');
  }
}

/**
 * A `listing` route: 403 unless the permissions are held on some account (or everywhere);
 * otherwise which accounts the answer may show (null: every account).
 */
export function authorizeListing(ctx: AppContext): number[] | null {
  const { rule, grants, route } = ruleOf(ctx);
  if (rule.scope !== 'listing') throw new Error(`${route} lists nothing: authorize()`);
  if (!allowsSomewhere(grants, rule.permissions)) throw forbidden('permission_denied');
  if (allowsAll(grants, rule.permissions, null)) return null;
  const accounts = new Set(grants.flatMap((g) => (g.accountId === null ? [] : [g.accountId])));
  return [...accounts].filter((accountId) => allowsAll(grants, rule.permissions, accountId));
}

/**
 * Loads the record a `record` route names and asserts the operator may act on its account.
 * Holding the permissions nowhere: 403, whatever the id. A record of an account the operator
 * may not act on answers as an unknown one (`unknown()`), so ids of others are not revealed.
 */
export async function authorizeRecord<T>(
  ctx: AppContext,
  load: () => Promise<T | null>,
  accountOf: (record: T) => number,
  unknown: () => AppError,
): Promise<T> {
  const { rule, grants, route } = ruleOf(ctx);
  if (rule.scope !== 'record') throw new Error(`${route} names no record: authorize()`);
  if (!allowsSomewhere(grants, rule.permissions)) throw forbidden('permission_denied');
  const record = await load();
  if (record === null || !allowsAll(grants, rule.permissions, accountOf(record))) throw unknown();
  return record;
}

/**
 * The route's `fields` rule (policy.ts): each field the validated body sends needs its permissions on
 * the account too, once the route's own rule allowed the call. 403 permission_denied otherwise.
 */
export function authorizeFields(ctx: AppContext, accountId: number, body: object): void {
  const { rule, grants, route } = ruleOf(ctx);
  if (!rule.fields) throw new Error(`${route} has no field rules`);
  const sent = Object.entries(body).filter(([, value]) => value !== undefined);
  const needed = sent.flatMap(([field]) => rule.fields?.[field] ?? []);
  if (!allowsAll(grants, needed, accountId)) throw forbidden('permission_denied');
}
