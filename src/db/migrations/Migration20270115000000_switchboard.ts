import { Migration } from '@mikro-orm/migrations';

/**
 * Several Services on one conversation (docs/decisions/switchboard.md): a Service's standby
 * setting (which conversations it does not own it hears of), the payload kinds its webhook
 * wants, the next Service of its handover chain; per conversation, the pending offer and the
 * last handover step (for idempotent repeats); and which Services took part in a conversation.
 */
export class Migration20270115000000_switchboard extends Migration {
  override up(): void {
    this.addSql(
      `alter table services add column standby varchar(16) not null default 'none' check (standby in ('none', 'all', 'participated'));`,
    );
    this.addSql(`alter table services add column webhook_kinds text[] not null default '{messages,events,actions}'
      check (webhook_kinds <@ '{messages,events,actions}'::text[]);`);
    this.addSql(`alter table services add column handover_next_service_id integer null references services (id) on delete set null;`);
    // Standby Services of an account, read at every message and event of the account.
    this.addSql(`create index services_standby_index on services (account_id) where standby <> 'none';`);
    this.addSql(`create table conversation_handovers (
        user_id integer primary key references users (id) on delete cascade,
        pending_service_id integer null references services (id) on delete cascade,
        offered_by_service_id integer null references services (id) on delete set null,
        offer_reason text null,
        offer_metadata text null,
        offer_expires_at timestamptz null,
        last_step varchar(16) null check (last_step in ('pass', 'offer', 'accept', 'release')),
        last_by_service_id integer null references services (id) on delete set null,
        updated_at timestamptz not null default now()
      );`);
    this.addSql(`create table conversation_participants (
        user_id integer not null references users (id) on delete cascade,
        service_id integer not null references services (id) on delete cascade,
        primary key (user_id, service_id)
      );`);
    this.addSql(`create index conversation_participants_service_index on conversation_participants (service_id, user_id);`);
  }
}
