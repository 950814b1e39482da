// The check of a one-statement batch of client messages (messages-at-once.ts): every sender is
// still the user its caller read (not erased, not merged, the same account, owner, identifier
// and additional information, which its webhook payload carries), no Service of its account
// listens on standby (that payload is judged by standby.ts), and no message of the batch's
// client ids was sent before. Any of these false, the statement writes nothing and the batch
// goes the locked way (client-messages.ts), which handles each case.
import { named, type Sql } from '../../db/named.ts';

export interface SeenSender {
  user_id: number;
  account_id: number;
  owner_service_id: number;
  unique_identifier: string | null;
  additional_information: Record<string, unknown> | null;
}

export interface SentKey {
  device_id: number;
  client_message_id: string;
}

/**
 * Each row is looked up by its key: the laterals' limits keep the planner from joining the lists
 * to whole tables (a generic plan, made for lists of unknown length, would read every user).
 * The CTE `verdict`, for insert-messages.ts's check: `ok`; `stale`, the senders not as seen
 * (erased ones too); `standby`, the accounts with a standby Service.
 */
export function sendersAsSeenSql(senders: readonly SeenSender[], keys: readonly SentKey[]): Sql {
  return named(
    `verdict as materialized (
       select coalesce(bool_and(x.same and not x.standby), false)
              and not exists (select 1 from jsonb_to_recordset(:keys::jsonb) as k(device_id int, client_message_id text)
                              cross join lateral (select 1 from messages m
                                                   where m.device_id = k.device_id and m.client_message_id = k.client_message_id
                                                   limit 1) m) as ok,
              array_agg(x.user_id) filter (where not x.same) as stale,
              array_agg(distinct x.account_id) filter (where x.standby) as standby
       from (select e.user_id, e.account_id,
                    coalesce(u.merged_into_user_id is null and u.account_id = e.account_id
                             and u.owner_service_id = e.owner_service_id
                             and u.unique_identifier is not distinct from e.unique_identifier
                             and u.additional_information is not distinct from e.additional_information, false) as same,
                    exists (select 1 from services s where s.account_id = e.account_id and s.standby <> 'none') as standby
             from jsonb_to_recordset(:senders::jsonb)
                  as e(user_id int, account_id int, owner_service_id int, unique_identifier text, additional_information jsonb)
             left join lateral (select * from users u where u.id = e.user_id limit 1) u on true) x
     )`,
    { senders: JSON.stringify(senders), keys: JSON.stringify(keys) },
  );
}
