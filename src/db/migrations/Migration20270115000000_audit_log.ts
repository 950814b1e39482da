import { Migration } from '@mikro-orm/migrations';

/**
 * The audit log (docs/security.md): one row per Admin API change, sign-in step and CLI change.
 * No foreign keys: an entry outlives the operator, account or record it names, until the
 * retention sweep (audit.retentionDays) deletes it. Names of changed fields only, never values.
 */
export class Migration20270115000000_audit_log extends Migration {
  override up(): void {
    this.addSql(`create table audit_entries (
      id bigint generated always as identity primary key,
      at timestamptz not null default now(),
      actor text not null check (actor in ('operator', 'cli', 'anonymous')),
      operator_id integer null,
      operator_identifier text null,
      operator_email text null,
      session_id integer null,
      account_id integer null,
      action text not null,
      target jsonb not null default '{}'::jsonb,
      changed text[] not null default '{}',
      outcome text not null,
      address text null,
      user_agent text null,
      request_id text null
    );`);
    // Newest first, by account, by operator (the page's filters), and the sweep by time.
    this.addSql(`create index audit_entries_account_index on audit_entries (account_id, id);`);
    this.addSql(`create index audit_entries_operator_index on audit_entries (operator_id, id);`);
    this.addSql(`create index audit_entries_at_index on audit_entries (at);`);
  }
}
