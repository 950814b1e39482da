import { Migration } from '@mikro-orm/migrations';

/**
 * The deliveries log now needs deliveries:read and conversations:read (its payloads hold the
 * conversation). Operators who could read it before and may read conversations keep it: each
 * scope holding both accounts:read and conversations:read also gets deliveries:read.
 */
export class Migration20261215000000_deliveries_read extends Migration {
  override up(): void {
    this.addSql(`
      insert into operator_permissions (operator_id, account_id, permission)
      select r.operator_id, r.account_id, 'deliveries:read'
      from operator_permissions r
      join operator_permissions c
        on c.operator_id = r.operator_id
       and c.account_id is not distinct from r.account_id
       and c.permission = 'conversations:read'
      where r.permission = 'accounts:read'
      on conflict do nothing;`);
  }
}
