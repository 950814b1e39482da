// Reading the audit log: newest first, filtered, in keyset pages (the Admin API's list and its
// export, the CLI's export), and the retention sweep.
import type { EntityManager } from '@mikro-orm/postgresql';
import { pgIntArray } from '../db/pg-arrays.ts';
import type { AuditOutcome } from './entries.ts';

export interface AuditFilter {
  /** The accounts whose entries may be shown; null: every entry, with or without an account. */
  readable: number[] | null;
  accountId?: number;
  operatorId?: number;
  action?: string;
  since?: Date;
  until?: Date;
}

export interface AuditRecord {
  id: string;
  at: Date;
  actor: 'operator' | 'cli' | 'anonymous';
  operatorId: number | null;
  operatorIdentifier: string | null;
  operatorEmail: string | null;
  sessionId: number | null;
  accountId: number | null;
  action: string;
  target: Record<string, string | number>;
  changed: string[];
  outcome: AuditOutcome;
  address: string | null;
  userAgent: string | null;
  requestId: string | null;
}

interface Row {
  id: string | number;
  at: string | Date;
  actor: AuditRecord['actor'];
  operator_id: number | null;
  operator_identifier: string | null;
  operator_email: string | null;
  session_id: number | null;
  account_id: number | null;
  action: string;
  target: Record<string, string | number> | string;
  changed: string[] | string;
  outcome: AuditOutcome;
  address: string | null;
  user_agent: string | null;
  request_id: string | null;
}

const parseArray = (value: string[] | string): string[] =>
  Array.isArray(value)
    ? value
    : value === '{}'
      ? []
      : value
          .slice(1, -1)
          .split(',')
          .map((v) => v.replace(/^"|"$/g, ''));

function recordOf(row: Row): AuditRecord {
  return {
    id: String(row.id),
    at: new Date(row.at),
    actor: row.actor,
    operatorId: row.operator_id,
    operatorIdentifier: row.operator_identifier,
    operatorEmail: row.operator_email,
    sessionId: row.session_id,
    accountId: row.account_id,
    action: row.action,
    target: typeof row.target === 'string' ? (JSON.parse(row.target) as Record<string, string | number>) : row.target,
    changed: parseArray(row.changed),
    outcome: row.outcome,
    address: row.address,
    userAgent: row.user_agent,
    requestId: row.request_id,
  };
}

/** A page of entries, newest first, older than the entry `before` (an id) when given. */
export async function listAudit(em: EntityManager, filter: AuditFilter, limit: number, before?: string): Promise<AuditRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.readable !== null) {
    where.push('account_id = any(?::int[])');
    params.push(pgIntArray(filter.readable));
  }
  if (filter.accountId !== undefined) {
    where.push('account_id = ?');
    params.push(filter.accountId);
  }
  if (filter.operatorId !== undefined) {
    where.push('operator_id = ?');
    params.push(filter.operatorId);
  }
  if (filter.action !== undefined) {
    // `service.update`, or every action of a kind: `service`.
    where.push("(action = ? or action like ? || '.%')");
    params.push(filter.action, filter.action);
  }
  if (filter.since) {
    where.push('at >= ?');
    params.push(filter.since);
  }
  if (filter.until) {
    where.push('at < ?');
    params.push(filter.until);
  }
  if (before !== undefined) {
    where.push('id < ?');
    params.push(before);
  }
  const rows = await em
    .getConnection()
    .execute<Row[]>(
      `select * from audit_entries ${where.length ? `where ${where.join(' and ')}` : ''} order by id desc limit ?`,
      [...params, limit],
      'all',
    );
  return rows.map(recordOf);
}

/** Every entry the filter selects, newest first, read a page at a time (an export of any length in bounded memory). */
export async function* eachAudit(em: EntityManager, filter: AuditFilter, pageSize = 500): AsyncGenerator<AuditRecord> {
  let before: string | undefined;
  for (;;) {
    const page = await listAudit(em, filter, pageSize, before);
    yield* page;
    if (page.length < pageSize) return;
    before = page[page.length - 1]?.id;
  }
}

/**
 * Deletes entries older than the retention, a batch at a time; how many. Safe on every node at
 * once: rows another node is deleting are skipped, not waited for.
 */
export async function sweepAudit(em: EntityManager, retentionDays: number, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await em.getConnection().execute<Array<{ id: string }>>(
      `delete from audit_entries where id in (
         select id from audit_entries where at < now() - make_interval(days => ?) order by id limit ? for update skip locked)
       returning id`,
      [retentionDays, batch],
      'all',
    );
    total += rows.length;
    if (rows.length < batch) return total;
  }
}
