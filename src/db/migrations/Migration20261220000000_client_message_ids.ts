import { Migration } from '@mikro-orm/migrations';

/**
 * A client may name its message (`clientMessageId`) so that sending it again after a lost
 * answer (a dropped socket, a timed-out request) writes nothing new. Unique per device: the id
 * is the sending client's, and a device keeps its messages' rows across merges.
 */
export class Migration20261220000000_client_message_ids extends Migration {
  override up(): void {
    this.addSql(`alter table messages add column client_message_id varchar(64) null;`);
    this.addSql(`
      create unique index messages_device_client_message_id_unique
        on messages (device_id, client_message_id) where client_message_id is not null;`);
  }
}
