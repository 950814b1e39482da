// Messages already sent under some client ids (client-messages.ts): by the batch's devices, or
// (replies by email, without a device) by its users. Read under the senders' user locks.
import { named, type Sql } from '../../db/named.ts';
import { pgIntArray, pgTextArray } from '../../db/pg-arrays.ts';

export interface EarlierSendsValues {
  deviceIds: readonly number[];
  /** Users whose messages without a device count. */
  userIds: readonly number[];
  clientMessageIds: readonly string[];
}

/** A messages row as it is, for a Message snapshot (db/snapshots.ts). */
export type EarlierSendsRow = Record<string, unknown>;

export function earlierSendsSql({ deviceIds, userIds, clientMessageIds }: EarlierSendsValues): Sql {
  return named(
    `select id::float8 as id, user_id, device_id, type_id, message, media, agent, content, request_url,
            client_message_id, status, created_at
       from messages
      where (device_id = any(:deviceIds::int[]) or (device_id is null and user_id = any(:userIds::int[])))
        and client_message_id = any(:clientMessageIds::text[])`,
    {
      deviceIds: pgIntArray([...new Set(deviceIds)]),
      userIds: pgIntArray([...new Set(userIds)]),
      clientMessageIds: pgTextArray([...new Set(clientMessageIds)]),
    },
  );
}
