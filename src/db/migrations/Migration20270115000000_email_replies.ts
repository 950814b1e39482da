import { Migration } from '@mikro-orm/migrations';

/**
 * A reply by email is written with no device and the client id `email:<hash of its Message-ID>`
 * (email/inbound.ts): unique per user, so the same email delivered twice (an MTA's retry, a
 * provider's re-sent webhook) is one message however the two deliveries race.
 */
export class Migration20270115000000_email_replies extends Migration {
  override up(): void {
    this.addSql(`
      create unique index messages_user_email_reply_unique
        on messages (user_id, client_message_id) where device_id is null and client_message_id like 'email:%';`);
  }
}
