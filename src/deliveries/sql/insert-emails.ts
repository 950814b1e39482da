// Email deliveries, one per user with an address who did not unsubscribe (outbox.ts), chained per
// user, not attempted before `notBeforeSeconds` from now.
import { named, type Sql } from '../../db/named.ts';

export interface EmailRow {
  id: string;
  user_id: number;
  payload: string;
}

export interface InsertEmailsRow {
  id: string;
}

export function insertEmailsSql(notBeforeSeconds: number, rows: readonly EmailRow[]): Sql {
  return named(
    `insert into deliveries (id, user_id, ordering_key, kind, payload, ready, next_attempt_at)
     select r.id, u.id, -u.id, 'email', r.payload,
            not exists (select 1 from deliveries e
                         where coalesce(e.service_id, 0) = 0 and e.ordering_key = -u.id and e.state = 'pending'),
            now() + (:notBeforeSeconds::int * interval '1 second')
       from jsonb_to_recordset(:rows::jsonb) as r(id uuid, user_id int, payload text)
       join users u on u.id = r.user_id and u.email is not null and u.email_unsubscribed_at is null
      order by u.id
     returning id`,
    { notBeforeSeconds, rows: JSON.stringify(rows) },
  );
}
