// Users locked in id order (users.ts), so two writers never wait on each other in a cycle; with
// the owners' delivery chain locks taken after every row lock (sorting needs every row, and
// PostgreSQL evaluates a volatile function of the select list after the sort), and `messageIds`
// message ids drawn once every row lock is held, so a conversation's ids grow in commit order;
// with the ids, whether the account has a standby Service at all (the partial index on them: one
// probe per user). Which ones hear the message (standby.ts) depends on the owner and on the
// owners the conversation had, so it is judged by a statement of its own, after the locks.
import type { User } from '../../db/entities/index.ts';
import { named, type Sql } from '../../db/named.ts';
import { pgIntArray } from '../../db/pg-arrays.ts';
import { chainLockSql } from '../../deliveries/sql/lock-chains.ts';

export interface LockUsersValues {
  ids: readonly number[];
  /** Take the owners' chain locks too. */
  ownerChains: boolean;
  /** Message ids to draw (with ownerChains). */
  messageIds: number;
  /** Read whether each user has a device to push to, and an address to email (without ownerChains). */
  pushDevices: boolean;
}

export interface LockUsersRow {
  id: number;
  account_id: number;
  owner_service_id: number;
  unique_identifier: string | null;
  additional_information: Record<string, unknown> | null;
  merged_into_user_id: number | null;
  push_devices?: boolean;
  emailable?: boolean;
  standby_listens?: boolean;
  message_ids?: Array<string | number>;
}

export interface LockedUser extends Pick<User, 'id' | 'accountId' | 'ownerServiceId' | 'uniqueIdentifier' | 'additionalInformation'> {
  mergedIntoUserId: number | null;
  /** Whether a device of the user can receive pushes (read when asked for: lockUsers' pushDevices). */
  pushDevices?: boolean;
  /** Whether answers can be emailed to the user: an address, not unsubscribed (read with pushDevices). */
  emailable?: boolean;
  /**
   * Whether a Service of the user's account listens on standby at all (read with the message
   * ids); when none does, the writer spends no statement on standby.ts.
   */
  standbyListens?: boolean;
}

const COLUMNS = 'id, account_id, owner_service_id, unique_identifier, additional_information, merged_into_user_id';

export function lockUsersSql({ ids, ownerChains, messageIds, pushDevices }: LockUsersValues): Sql {
  const userIds = pgIntArray([...new Set(ids)].sort((a, b) => a - b));
  if (ownerChains) {
    const reserved =
      messageIds > 0
        ? `, (select array_agg(i.id order by i.id) from (
               select nextval(pg_get_serial_sequence('messages', 'id')) as id
               from generate_series(1, :messageIds::int) where (select count(*) from locked) >= 0) i) as message_ids,
             exists (select 1 from services s where s.account_id = locked.account_id and s.standby <> 'none') as standby_listens`
        : '';
    return named(
      `with locked as materialized (select ${COLUMNS} from users where id = any(:userIds::int[]) order by id for update)
       select ${COLUMNS}, ${chainLockSql('owner_service_id', 'id')}${reserved} from locked order by owner_service_id, id`,
      messageIds > 0 ? { userIds, messageIds } : { userIds },
    );
  }
  const pushable = pushDevices ? `, ${pushDevicesSql('users')} as push_devices, ${emailableSql('users')} as emailable` : '';
  return named(`select ${COLUMNS}${pushable} from users where id = any(:userIds::int[]) order by id for update`, { userIds });
}

/**
 * Whether a device of the user (`users` row alias) can be pushed to, as enqueuePushes selects
 * them (outbox.ts), so that a writer of messages for users with none spends no statement on pushes.
 */
export function pushDevicesSql(alias: string): string {
  return `exists (select 1 from devices d join push_settings p on p.account_id = d.account_id and p.push_type = d.push_type
                  where d.user_id = ${alias}.id and d.push_enabled and d.push_token is not null)`;
}

/** Whether answers can be emailed to the user (`users` row alias): an address, not unsubscribed. */
export function emailableSql(alias: string): string {
  return `(${alias}.email is not null and ${alias}.email_unsubscribed_at is null)`;
}

export function toLockedUsers(rows: readonly LockUsersRow[]): { users: Map<number, LockedUser>; messageIds: number[] } {
  const users = new Map(
    rows.map((r): [number, LockedUser] => [
      r.id,
      {
        id: r.id,
        accountId: r.account_id,
        ownerServiceId: r.owner_service_id,
        uniqueIdentifier: r.unique_identifier,
        additionalInformation: r.additional_information,
        mergedIntoUserId: r.merged_into_user_id,
        ...(r.push_devices === undefined ? {} : { pushDevices: r.push_devices }),
        ...(r.emailable === undefined ? {} : { emailable: r.emailable }),
        ...(r.standby_listens === undefined ? {} : { standbyListens: r.standby_listens }),
      },
    ]),
  );
  return { users, messageIds: (rows[0]?.message_ids ?? []).map(Number) };
}
