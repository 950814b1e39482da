import { Migration } from '@mikro-orm/migrations';

/**
 * Every attempt of a delivery, as the worker recorded its outcome: the dashboard shows them
 * one by one, and the last hour's "failed" counts failed attempts (a delivery keeps only its
 * count and the last status). Written in the transaction of the outcome, in the same batch;
 * gone with its delivery. `service_id` is copied from the delivery (null for a push) so that a
 * Service's last hour is read from one index.
 */
export class Migration20261230000000_delivery_attempts extends Migration {
  override up(): void {
    this.addSql(`
      create table delivery_attempts (
        id bigint generated always as identity primary key,
        delivery_id uuid not null references deliveries (id) on delete cascade,
        service_id integer null,
        attempt integer not null,
        started_at timestamptz not null,
        duration_ms integer not null,
        status integer null,
        error text null,
        outcome varchar(16) not null check (outcome in ('delivered', 'retry', 'dead', 'gone', 'unregistered')),
        next_attempt_at timestamptz null,
        node varchar(64) not null
      );`);
    this.addSql(`create index delivery_attempts_delivery_index on delivery_attempts (delivery_id, id);`);
    this.addSql(`create index delivery_attempts_service_index on delivery_attempts (service_id, started_at) where service_id is not null;`);
  }
}
