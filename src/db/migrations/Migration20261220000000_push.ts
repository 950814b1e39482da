import { Migration } from '@mikro-orm/migrations';

/**
 * Push notifications to app devices (docs/push.md). The outbox gains a second kind of
 * target: a delivery goes to a Service (its webhook) or to a device (by its push type), never
 * both. Push deliveries chain per device (ordering key = device id, Service 0 in the chain
 * key, so their chains never meet a Service's). Push settings are per account and push type.
 */
export class Migration20261220000000_push extends Migration {
  override up(): void {
    this.addSql(`alter table deliveries alter column service_id drop not null;`);
    this.addSql(`alter table deliveries add column device_id integer null references devices (id) on delete cascade;`);
    this.addSql(`alter table deliveries add constraint deliveries_target_check check ((service_id is null) <> (device_id is null));`);
    // Chains are (Service or 0, ordering key): the index follows the expression the statements use.
    this.addSql(`drop index deliveries_order_index;`);
    this.addSql(
      `create index deliveries_order_index on deliveries ((coalesce(service_id, 0)), ordering_key, seq) where state = 'pending';`,
    );
    // The push deliveries log of an account walks its devices' rows newest first.
    this.addSql(`create index deliveries_device_state_index on deliveries (device_id, state, seq) where device_id is not null;`);
    this.addSql(`
      create table push_settings (
        account_id integer not null references accounts (id) on delete cascade,
        -- 4 push webhook, 5 push webhook behind OAuth, 6 FCM: the device's pushType.
        push_type smallint not null check (push_type in (4, 5, 6)),
        -- Secrets included (FCM private key, OAuth client secret, webhook signing secret): never presented.
        settings jsonb not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        primary key (account_id, push_type)
      );`);
  }
}
