import { Migration } from '@mikro-orm/migrations';

/**
 * The rich parts of agent messages (title, buttons, quick replies, carousel), as one JSON
 * value; null on every message without them, so existing rows need no rewrite.
 */
export class Migration20261201000000_message_content extends Migration {
  override up(): void {
    this.addSql(`alter table messages add column content jsonb null;`);
  }
}
