// The audit context of an Admin request, given to the command that records the change: the
// signed-in operator and their session, the address trusted proxies vouch for (addresses.ts
// sets ctx.ip), the user agent and the request id; and the action the route's declaration names.
import { operatorActor, type AuditContext, type AuditOrigin, type AuditRequest } from '../../audit/context.ts';
import type { AppContext } from '../../http/types.ts';

export function auditOrigin(ctx: AppContext): AuditOrigin {
  return { address: ctx.ip || null, userAgent: ctx.get('user-agent') || null, requestId: ctx.state.requestId };
}

export function operatorAudit(ctx: AppContext): AuditContext {
  const operator = ctx.state.operator;
  if (!operator) throw new Error('requireOperator() must run before admin routes');
  return { ...auditOrigin(ctx), actor: operatorActor(operator, operator.sessionId) };
}

/** The context and the action of the route being served (its declaration's `audit`). */
export function auditRequest(ctx: AppContext): AuditRequest {
  const action = ctx.state.adminRoute?.audit;
  if (!action) throw new Error(`${ctx.method} ${String(ctx._matchedRoute)} declares no audit action`);
  return { context: operatorAudit(ctx), action };
}
