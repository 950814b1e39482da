import { Migration } from '@mikro-orm/migrations';

/**
 * An account's authorization secret can be rotated: the one before still verifies customers'
 * headers until it expires, so their backends can switch to the new one without signing anybody out.
 */
export class Migration20261231000000_authorization_secret_rotation extends Migration {
  override up(): void {
    this.addSql(`alter table accounts add column previous_authorization_secret text null;`);
    this.addSql(`alter table accounts add column previous_authorization_secret_expires_at timestamptz null;`);
  }
}
