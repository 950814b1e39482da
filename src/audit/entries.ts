// Writing an audit entry, always inside the transaction of the change it records (a change
// that rolls back leaves no entry, an entry that fails rolls the change back).
import type { EntityManager } from '@mikro-orm/postgresql';
import { pgTextArray } from '../db/pg-arrays.ts';
import type { AuditContext, AuditNote, AuditRequest } from './context.ts';

export type AuditOutcome = 'success' | 'failure' | 'refused';

export interface AuditDetails {
  accountId?: number | null;
  /** The ids of what was changed: { serviceId: 4 }, { operatorId: 2, sessionId: 9 }. */
  target?: Record<string, string | number>;
  /** Names of the fields changed, never their values. */
  changed?: readonly string[];
  outcome?: AuditOutcome;
}

export interface AuditEntry extends AuditDetails {
  action: string;
}

const INSERT = `insert into audit_entries
  (actor, operator_id, operator_identifier, operator_email, session_id, account_id, action, target, changed, outcome,
   address, user_agent, request_id)
  values (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::text[], ?, ?, ?, ?)`;

/** Writes the entry in `tx`'s transaction (or on its own when `tx` has none: a refused sign-in changes nothing). */
export async function recordAudit(tx: EntityManager, context: AuditContext, entry: AuditEntry): Promise<void> {
  const { actor } = context;
  const changed = [...new Set(entry.changed ?? [])].sort();
  await tx
    .getConnection()
    .execute(
      INSERT,
      [
        actor.kind,
        actor.operator?.id ?? null,
        actor.operator?.identifier ?? null,
        (actor.operator?.email ?? actor.email ?? null)?.slice(0, 320) ?? null,
        actor.sessionId,
        entry.accountId ?? null,
        entry.action,
        JSON.stringify(entry.target ?? {}),
        pgTextArray(changed),
        entry.outcome ?? 'success',
        context.address?.slice(0, 64) ?? null,
        context.userAgent?.slice(0, 512) ?? null,
        context.requestId?.slice(0, 128) ?? null,
      ],
      'run',
      tx.getTransactionContext(),
    );
}

/**
 * The entry of a command that records its own change (it notifies or enqueues in its own
 * transaction, so it cannot run inside audited()): nothing when its caller gave no note (a test,
 * an internal call); the note's `changed` unless the command names the fields itself.
 */
export async function recordNote(tx: EntityManager, audit: AuditNote | undefined, details: AuditDetails): Promise<void> {
  if (audit) await recordAudit(tx, audit.context, { action: audit.action, changed: audit.changed, ...details });
}

/**
 * Runs a command in one transaction with its audit entry: `describe` says what the result
 * changed (null or false: nothing, no entry). The command's own em.transactional calls join this one.
 */
export async function audited<T>(
  em: EntityManager,
  request: AuditRequest,
  run: (tx: EntityManager) => Promise<T>,
  describe: (result: T) => AuditDetails | null | false,
): Promise<T> {
  return em.transactional(async (tx) => {
    const result = await run(tx);
    const details = describe(result);
    if (details) await recordAudit(tx, request.context, { action: request.action, ...details });
    return result;
  });
}

/** The names of the fields a body sends (those not undefined): what a change changed, never their values. */
export function sentFields(body: object): string[] {
  return Object.entries(body)
    .filter(([, value]) => value !== undefined)
    .map(([field]) => field);
}
