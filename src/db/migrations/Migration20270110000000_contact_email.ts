import { Migration } from '@mikro-orm/migrations';

/**
 * The customer's contact details on the user (email, name, language, who set them, an
 * unsubscription from answers by email), and emails as a third kind of delivery target: a user
 * (`user_id`). Email deliveries chain per user under Service 0 with the negated user id as their
 * ordering key, so their chains never meet a Service's (ids from 1) nor a device's (ids from 1).
 */
export class Migration20270110000000_contact_email extends Migration {
  override up(): void {
    this.addSql(`alter table users add column email text null;`);
    this.addSql(`alter table users add column contact_name text null;`);
    this.addSql(`alter table users add column contact_language text null;`);
    this.addSql(`alter table users add column contact_source text null check (contact_source in ('client', 'service'));`);
    this.addSql(`alter table users add column contact_updated_at timestamptz null;`);
    this.addSql(`alter table users add column email_unsubscribed_at timestamptz null;`);
    this.addSql(`alter table deliveries add column user_id integer null references users (id) on delete cascade;`);
    this.addSql(`alter table deliveries drop constraint deliveries_target_check;`);
    this.addSql(`alter table deliveries add constraint deliveries_target_check check (num_nonnulls(service_id, device_id, user_id) = 1);`);
    // The email sender looks up the last email sent to a user (its burst's lower bound).
    this.addSql(`create index deliveries_user_state_index on deliveries (user_id, state, seq) where user_id is not null;`);
  }
}
