import type { AuditRecord } from '../audit/log.ts';

/** One audit entry, as GET /adminApi/audit lists it and its export writes it (one JSON line each). */
export function presentAuditEntry(entry: AuditRecord) {
  return {
    id: entry.id,
    at: entry.at.toISOString(),
    actor: entry.actor,
    operator:
      entry.operatorId !== null || entry.operatorEmail !== null
        ? { id: entry.operatorId, identifier: entry.operatorIdentifier, email: entry.operatorEmail }
        : null,
    sessionId: entry.sessionId,
    accountId: entry.accountId,
    action: entry.action,
    target: entry.target,
    changed: entry.changed,
    outcome: entry.outcome,
    address: entry.address,
    userAgent: entry.userAgent,
    requestId: entry.requestId,
  };
}
