import { Migration } from '@mikro-orm/migrations';

/**
 * An operator can be disabled (and enabled again) without losing their grants: a disabled
 * operator cannot sign in and their tokens are refused. Null: enabled.
 */
export class Migration20261228000000_operator_disabled extends Migration {
  override up(): void {
    this.addSql(`alter table operators add column disabled_at timestamptz null;`);
  }
}
