// The Client API's callers (caller.ts): for each (account identification, device id), the account,
// the device and its user as JSON rows, in one statement for a batch of calls.
import { named, type Sql } from '../../../db/named.ts';
import { pgTextArray } from '../../../db/pg-arrays.ts';

export interface CallerKey {
  accountIdentification: string;
  deviceId: string;
}

/** The rows as they are, for snapshots (db/snapshots.ts); null where nothing was found. */
export type CallerRows = Record<'account' | 'device' | 'user', Record<string, unknown> | null>;

export type ReadCallersRow = CallerRows & { n: number };

export function readCallersSql(keys: readonly CallerKey[]): Sql {
  return named(
    `select k.n, row_to_json(a) as account, row_to_json(d) as device, row_to_json(u) as "user"
       from unnest(:accounts::text[], :devices::text[]) with ordinality as k(account_identification, device_id, n)
       join accounts a on a.identification = k.account_identification
       left join devices d on d.account_id = a.id and d.unique_app_device_id = k.device_id
       left join users u on u.id = d.user_id`,
    { accounts: pgTextArray(keys.map((k) => k.accountIdentification)), devices: pgTextArray(keys.map((k) => k.deviceId)) },
  );
}

/** Per key, in order, its rows, or null when its account does not exist. */
export function toCallerRows(count: number, rows: readonly ReadCallersRow[]): Array<CallerRows | null> {
  const found = new Map(rows.map((row) => [Number(row.n), row]));
  return Array.from({ length: count }, (_, i) => found.get(i + 1) ?? null);
}
