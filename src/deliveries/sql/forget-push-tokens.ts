// Push tokens their push service called unregistered or invalid, removed (outcomes.ts): only the
// token that was refused, since the app may have registered a new one meanwhile.
import { named, type Sql } from '../../db/named.ts';
import { pgIntArray, pgTextArray } from '../../db/pg-arrays.ts';

/** No rows. */
export function forgetPushTokensSql(refused: ReadonlyArray<{ deviceId: number; token: string }>): Sql {
  return named(
    `update devices v set push_token = null, updated_at = now()
       from unnest(:devices::int[], :tokens::text[]) as r(device_id, token)
      where v.id = r.device_id and v.push_token = r.token`,
    { devices: pgIntArray(refused.map((r) => r.deviceId)), tokens: pgTextArray(refused.map((r) => r.token)) },
  );
}
