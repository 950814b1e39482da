import { Migration } from '@mikro-orm/migrations';

/**
 * Which device uploaded a file (none for a Service's uploads), and indexes for the bytes a
 * conversation and a device uploaded within the quota window.
 */
export class Migration20270101000000_media_device extends Migration {
  override up(): void {
    this.addSql(`alter table media add column device_id integer null references devices (id) on delete set null;`);
    this.addSql(`create index media_device_id_created_at_index on media (device_id, created_at) where device_id is not null;`);
    this.addSql(`create index media_user_id_created_at_index on media (user_id, created_at);`);
    this.addSql(`drop index media_user_id_index;`);
  }
}
