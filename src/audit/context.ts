// Who does a change and from where: given explicitly to every command that writes an audit
// entry (the Admin API builds it from the request, the CLI names itself), never looked up
// from the side.

/** The operator as they were at the time of the entry (the email may change later). */
export interface AuditOperator {
  id: number;
  identifier: string;
  email: string;
}

export interface AuditActor {
  /** 'anonymous': a sign-in step before anyone is known (a wrong password, a reset link). */
  kind: 'operator' | 'cli' | 'anonymous';
  operator: AuditOperator | null;
  sessionId: number | null;
  /** For a failed sign-in: the email that was tried (no operator, or the one it matched). */
  email?: string | null;
}

/** Where a request came from: the address trusted proxies vouch for (src/addresses.ts), its user agent and request id. */
export interface AuditOrigin {
  address: string | null;
  userAgent: string | null;
  requestId: string | null;
}

export interface AuditContext extends AuditOrigin {
  actor: AuditActor;
}

/** A change by an Admin route: the context, and the action its declaration names. */
export interface AuditRequest {
  context: AuditContext;
  action: string;
}

/** What a command records of its change: the request, and the names of the fields it changes when the caller knows them. */
export interface AuditNote extends AuditRequest {
  changed?: readonly string[];
}

export const CLI_ORIGIN: AuditOrigin = { address: null, userAgent: null, requestId: null };

/** The command line (npm run admin): the machine's owner, no operator. */
export const CLI_CONTEXT: AuditContext = { ...CLI_ORIGIN, actor: { kind: 'cli', operator: null, sessionId: null } };

export const operatorActor = (operator: AuditOperator, sessionId: number | null): AuditActor => ({
  kind: 'operator',
  operator: { id: operator.id, identifier: operator.identifier, email: operator.email },
  sessionId,
});
