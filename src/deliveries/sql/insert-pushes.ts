// Push deliveries, one per device, chained per device (outbox.ts): only the first of a device's
// chain can be ready, and only if nothing of it is pending.
import { named, type Sql } from '../../db/named.ts';

export interface PushRow {
  id: string;
  device_id: number;
  kind: string;
  payload: string;
  /** Its order in the call. */
  i: number;
}

/** No rows. */
export function insertPushesSql(rows: readonly PushRow[]): Sql {
  return named(
    `insert into deliveries (id, device_id, ordering_key, kind, payload, ready)
     select r.id, r.device_id, r.device_id, r.kind, r.payload,
            row_number() over (partition by r.device_id order by r.i) = 1 and not exists (
              select 1 from deliveries e
              where coalesce(e.service_id, 0) = 0 and e.ordering_key = r.device_id and e.state = 'pending')
     from jsonb_to_recordset(:rows::jsonb) as r(id uuid, device_id int, kind text, payload text, i int)
     order by r.i`,
    { rows: JSON.stringify(rows) },
  );
}
