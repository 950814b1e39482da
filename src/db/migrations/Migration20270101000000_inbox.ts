import { Migration } from '@mikro-orm/migrations';

/**
 * The team inbox (docs/dashboard.md): a Service of kind `inbox` (no webhook URL, no API keys),
 * at most one per account, given to every account that exists; operators become agents, with a
 * display name and an avatar (an https URL) that their answers carry.
 */
export class Migration20270101000000_inbox extends Migration {
  override up(): void {
    this.addSql(`alter table services add column kind varchar(16) not null default 'webhook';`);
    this.addSql(`alter table services add constraint services_kind_check check (kind in ('webhook', 'inbox'));`);
    // The inbox never has a webhook: nothing is ever enqueued for it (outbox.ts skips Services without one).
    this.addSql(`alter table services add constraint services_inbox_no_webhook check (kind <> 'inbox' or webhook_url is null);`);
    this.addSql(`create unique index services_one_inbox on services (account_id) where kind = 'inbox';`);
    // Existing accounts get theirs. Its identification is 16 alphanumerics as any Service's; its
    // signing secret signs nothing (it receives no webhooks) but the column is required.
    this.addSql(`
      insert into services (account_id, name, identification, webhook_url, signing_secret, kind)
      select a.id, 'Team inbox', substr(md5(random()::text || a.id::text || clock_timestamp()::text), 1, 16), null,
             'whsec_' || encode(decode(md5(random()::text) || md5(random()::text), 'hex'), 'base64'), 'inbox'
      from accounts a
      where not exists (select 1 from services s where s.account_id = a.id and s.kind = 'inbox');`);
    this.addSql(`alter table operators add column display_name varchar(255) null;`);
    this.addSql(`alter table operators add column avatar_url text null;`);
  }
}
