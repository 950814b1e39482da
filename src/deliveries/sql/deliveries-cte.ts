// The deliveries of payloads to Services as CTEs (outbox.ts): for a statement that also writes what
// causes them (the client-message batch writes its messages and their deliveries in one
// statement), or alone (enqueueAll). Services without a webhook URL receive nothing, nor those
// whose webhook does not want the payload's kind; rows are inserted in request order, so `seq`
// keeps it; a row that is ready, to an enabled Service, is leased to this node's worker when it
// has room (handoff.ts), and what the worker needs to send it comes back with it.
import { named, type Sql } from '../../db/named.ts';
import type { DeliveryKind } from '../../db/entities/index.ts';
import type { ClaimedWebhook } from '../claimed.ts';
import { LEASE_COLUMNS, leaseValues, type Lease } from '../lease.ts';
import { previousSecretSql } from '../secrets.ts';

/** One delivery to write. */
export interface DeliveryRow {
  id: string;
  service_id: number;
  ordering_key: number | null;
  kind: DeliveryKind;
  payload: string;
  /** The first of its chain in this call: only it can be ready, and only if the chain has nothing pending. */
  first: boolean;
  n: number;
  /**
   * The payload is that of the message the same statement writes at this position of its rows
   * (insert-messages.ts, CTE `p`), and carries 0 at character `id_at` (from 1) in place of its id,
   * which the statement fills in: for a statement that draws the ids itself (messages-at-once.ts).
   */
  message_n?: number;
  id_at?: number;
}

/** The CTE that returns what was written, one row per delivery, with `n` its position. */
export const DELIVERIES_OUT = 'deliveries_out';

/** A row of DELIVERIES_OUT. */
export type WrittenRow = Omit<ClaimedWebhook, 'deviceId' | 'attempts' | 'payload'> & { n: number; ready: boolean; leased: boolean };

/**
 * CTEs `deliveries_in`, `deliveries_leased`, `deliveries_inserted` and DELIVERIES_OUT, for a `with`
 * list. With `messages` (the name of a CTE of `n` and `id` before them), every row's payload gets
 * its message's id (DeliveryRow's message_n).
 */
export function deliveriesCteSql(
  rows: readonly DeliveryRow[],
  room: { lease: Lease | null; leased: Sql; join: Sql },
  messages: string | null = null,
): Sql {
  const payload = messages ? `overlay(r.payload placing m.id::text from r.id_at for 1) as payload` : 'r.payload';
  const messageColumns = messages ? ', message_n int, id_at int' : '';
  const ofMessage = messages ? `\n       join ${messages} m on m.n = r.message_n` : '';
  return named(
    // Whether a chain has a pending delivery is looked up row by row in the chain index (the
    // lateral's limit keeps the planner from hashing every pending delivery, which a backlog
    // makes many); materialized, so it is looked up once.
    `deliveries_in as materialized (
       select r.id, r.service_id, r.ordering_key, r.kind, ${payload}, r.n,
              r.ordering_key is null or (r.first and earlier.pending is null) as ready,
              s.disabled_at is null as enabled, s.webhook_url, s.signing_secret,
              ${previousSecretSql('s')} as previous_signing_secret
       from jsonb_to_recordset(:rows::jsonb)
            as r(id uuid, service_id int, ordering_key int, kind text, payload text, first boolean, n int${messageColumns})${ofMessage}
       join services s on s.id = r.service_id and s.webhook_url is not null
        and (case r.kind when 'message' then 'messages' when 'event' then 'events' else 'actions' end) = any(s.webhook_kinds)
       left join lateral (
         select true as pending from deliveries e
         where coalesce(e.service_id, 0) = r.service_id and e.ordering_key = r.ordering_key and e.state = 'pending'
         limit 1) earlier on r.first
     ),
     deliveries_leased as (select r.*, :leased as leased from deliveries_in r :room),
     deliveries_inserted as (
       insert into deliveries (id, service_id, ordering_key, kind, payload, ready, ${LEASE_COLUMNS.join(', ')})
       select id, service_id, ordering_key, kind, payload, ready, :lease
       from deliveries_leased order by n
     ),
     ${DELIVERIES_OUT} as (
       select id, service_id as "serviceId", service_id as bucket, kind, webhook_url as "webhookUrl",
              signing_secret as "signingSecret", previous_signing_secret as "previousSigningSecret", ready, leased, n
       from deliveries_leased
     )`,
    {
      rows: JSON.stringify(rows),
      leased: room.leased,
      room: room.join,
      lease: leaseValues(room.lease, 'leased', '0'),
    },
  );
}

/** The deliveries alone: DELIVERIES_OUT's rows (WrittenRow) in order. */
export function insertDeliveriesSql(deliveries: Sql): Sql {
  return named(`with :deliveries select * from ${DELIVERIES_OUT} order by n`, { deliveries });
}
