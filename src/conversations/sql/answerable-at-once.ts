// The check of a one-statement batch of agent messages (agents.ts, on the embedded database):
// every user is there, of the calling Service's account, not merged, with no device to push to
// and, when answers are emailed, no address to email them to. Any of these false, the statement
// writes nothing and the batch goes the locked way, which refuses or pushes and emails as due.
import { named, type Sql } from '../../db/named.ts';
import { emailableSql, pushDevicesSql } from './lock-users.ts';

export interface AnsweredUser {
  user_id: number;
  account_id: number;
  /** An answer (not an agent system message) while answers are emailed: an address needs the locked way. */
  emailed: boolean;
}

/**
 * The CTE `verdict` for insert-messages.ts's check: `ok`, and `reached`, the users with a device
 * to push to or an address to email the answer to. Each user looked up by its
 * key (the lateral's limit: see senders-as-seen.ts).
 */
export function answerableAtOnceSql(users: readonly AnsweredUser[]): Sql {
  return named(
    `verdict as materialized (
       select coalesce(bool_and(x.known and not x.reached), false) as ok,
              array_agg(x.user_id) filter (where x.reached) as reached
       from (select e.user_id,
                    coalesce(u.account_id = e.account_id and u.merged_into_user_id is null, false) as known,
                    coalesce(${pushDevicesSql('u')} or (e.emailed and ${emailableSql('u')}), false) as reached
             from jsonb_to_recordset(:users::jsonb) as e(user_id int, account_id int, emailed boolean)
             left join lateral (select * from users u where u.id = e.user_id limit 1) u on true) x
     )`,
    { users: JSON.stringify(users) },
  );
}
