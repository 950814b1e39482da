// The Service API's callers (caller.ts): for each key hash, the key's Service and its account as
// JSON rows, in one statement for a batch of calls; revoked keys find nothing.
import { named, type Sql } from '../../../db/named.ts';
import { pgTextArray } from '../../../db/pg-arrays.ts';

/** The rows as they are, for snapshots (db/snapshots.ts). */
export type KeyRows = Record<'service' | 'account', Record<string, unknown>>;

export type ReadKeysRow = KeyRows & { n: number };

export function readKeysSql(hashes: readonly string[]): Sql {
  return named(
    `select k.n, row_to_json(s) as service, row_to_json(a) as account
     from unnest(:hashes::text[]) with ordinality as k(key_hash, n)
     join service_api_keys x on x.key_hash = k.key_hash and x.revoked_at is null
     join services s on s.id = x.service_id join accounts a on a.id = s.account_id`,
    { hashes: pgTextArray(hashes) },
  );
}

/** Per hash, in order, its rows, or null when no live key has it. */
export function toKeyRows(count: number, rows: readonly ReadKeysRow[]): Array<KeyRows | null> {
  const found = new Map(rows.map((row) => [Number(row.n), row]));
  return Array.from({ length: count }, (_, i) => found.get(i + 1) ?? null);
}
