// The audit context of an Admin request, given to the command that records the change: the
// signed-in operator and their session, the address trusted proxies vouch for (addresses.ts
// sets ctx.ip), the user agent and the request id; and the action the route's declaration names.
import type { EntityManager } from '@mikro-orm/postgresql';
import { operatorActor, type AuditContext, type AuditOrigin, type AuditRequest } from '../../audit/context.ts';
import { audited, type AuditDetails } from '../../audit/entries.ts';
import type { AppContext } from '../../http/types.ts';
import { signedIn } from './operator-access.ts';

export function auditOrigin(ctx: AppContext): AuditOrigin {
  return { address: ctx.ip || null, userAgent: ctx.get('user-agent') || null, requestId: ctx.state.requestId };
}

export function operatorAudit(ctx: AppContext): AuditContext {
  const operator = signedIn(ctx);
  return { ...auditOrigin(ctx), actor: operatorActor(operator, operator.sessionId) };
}

/** The context and the action of the route being served (its declaration's `audit`). */
export function auditRequest(ctx: AppContext): AuditRequest {
  const action = ctx.state.adminRoute?.audit;
  if (!action) throw new Error(`${ctx.method} ${String(ctx._matchedRoute)} declares no audit action`);
  return { context: operatorAudit(ctx), action };
}

/** A change of the route being served in one transaction with its audit entry (audited()): what `describe` says of its result. */
export function auditedChange<T>(
  ctx: AppContext,
  run: (tx: EntityManager) => Promise<T>,
  describe: (result: T) => AuditDetails | null | false,
): Promise<T> {
  return audited(ctx.deps.db.orm.em, auditRequest(ctx), run, describe);
}
