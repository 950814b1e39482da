// Delivery chain locks (outbox.ts, outcomes.ts take the same ones): the transaction-level advisory
// lock of (Service, ordering key), Service 0 for pushes and emails. Taken in one global order, so
// transactions that lock several chains cannot deadlock.
import { named, type Sql } from '../../db/named.ts';
import { pgIntArray } from '../../db/pg-arrays.ts';

/** The chain lock as SQL over two columns, for a statement that takes it beside other locks (lockUsers). */
export function chainLockSql(serviceColumn: string, keyColumn: string): string {
  return `pg_advisory_xact_lock(${serviceColumn}, ${keyColumn})`;
}

/** Locks the chains (Service, ordering key), in that order. No rows worth reading. */
export function lockChainsSql(chains: ReadonlyArray<readonly [number, number]>): Sql {
  return named(
    `select ${chainLockSql('c.service_id', 'c.ordering_key')}
       from unnest(:services::int[], :keys::int[]) as c(service_id, ordering_key)
      order by c.service_id, c.ordering_key`,
    { services: pgIntArray(chains.map(([serviceId]) => serviceId)), keys: pgIntArray(chains.map(([, key]) => key)) },
  );
}
