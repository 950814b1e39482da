// Ends deliveries (delivered or dead) and promotes the next pending delivery of each of their
// chains, logging the attempts, in one statement (outcomes.ts): all three see the rows as they
// were before it, so the new head is the first pending delivery of its chain not being ended.
// A new head to a Service is leased to this node's worker when it has room (handoff.ts).
import { fromJson } from '../../db/json.ts';
import { named, type Sql } from '../../db/named.ts';
import { pgTextArray, pgUuidArray } from '../../db/pg-arrays.ts';
import type { ClaimedWebhook } from '../claimed.ts';
import type { Lease } from '../lease.ts';
import { leaseSet, UNLEASED } from '../lease.ts';
import { previousSecretSql } from '../secrets.ts';
import { LOGGED_SERVICES, statusesOf } from './attempts-log.ts';

export interface EndDeliveriesValues {
  node: string;
  ended: ReadonlyArray<{ id: string; state: 'delivered' | 'dead'; status: number | null; error: string | null }>;
  /** The `logged` CTE (attempts-log.ts). */
  log: Sql;
  /** The hand-off pieces (handoff-lease.ts) over the heads `h`. */
  room: { lease: Lease | null; leased: Sql; join: Sql };
}

export interface EndDeliveriesRow {
  serviceIds: unknown;
  claims: unknown;
  due: boolean;
}

export interface Ended {
  /** The Services of the logged attempts, ascending. */
  serviceIds: number[];
  /** New heads leased to this node's worker. */
  claims: ClaimedWebhook[];
  /** New heads left unleased. */
  due: boolean;
}

export function endDeliveriesSql({ node, ended, log, room }: EndDeliveriesValues): Sql {
  return named(
    `with :log,
     ended as (
       update deliveries d
          set state = r.state, delivered_at = case when r.state = 'delivered' then now() end, ${UNLEASED}, ready = false,
              last_status = r.status, last_error = r.error, updated_at = now()
         from unnest(:ids::uuid[], :states::text[], :status::int[], :error::text[]) as r(id, state, status, error)
        where d.id = r.id and d.state = 'pending' and (r.state = 'delivered' or d.claimed_by = :node)
       returning d.id, coalesce(d.service_id, 0) as service_id, d.ordering_key
     ),
     promoted as (
       update deliveries d
          set ready = true, :lease
         from (select h.id, :leased as leased
                 from (select distinct on (coalesce(e.service_id, 0), e.ordering_key) e.id, e.seq, e.service_id,
                              not e.ready and s.id is not null and s.disabled_at is null and s.webhook_url is not null as eligible
                         from deliveries e
                         join (select distinct service_id, ordering_key from ended where ordering_key is not null) c
                           on coalesce(e.service_id, 0) = c.service_id and e.ordering_key = c.ordering_key
                         left join services s on s.id = e.service_id
                        where e.state = 'pending' and e.id not in (select id from ended)
                        order by coalesce(e.service_id, 0), e.ordering_key, e.seq) h
                 :room) head
        where d.id = head.id and not d.ready
       returning d.id, d.service_id, d.kind, d.payload, d.attempts, head.leased
     )
     select (select coalesce(json_agg(l."serviceId"), '[]') from (${LOGGED_SERVICES}) l) as "serviceIds",
            (select coalesce(json_agg(json_build_object(
                      'id', p.id, 'serviceId', p.service_id, 'bucket', p.service_id, 'deviceId', null, 'kind', p.kind,
                      'payload', p.payload, 'attempts', p.attempts, 'webhookUrl', s.webhook_url, 'signingSecret', s.signing_secret,
                      'previousSigningSecret', ${previousSecretSql('s')})), '[]')
               from promoted p join services s on s.id = p.service_id where p.leased) as claims,
            exists (select 1 from promoted where not leased) as due`,
    {
      log,
      ids: pgUuidArray(ended.map((r) => r.id)),
      states: pgTextArray(ended.map((r) => r.state)),
      status: statusesOf(ended),
      error: pgTextArray(ended.map((r) => r.error)),
      node,
      lease: leaseSet(room.lease, 'head.leased', 'd'),
      leased: room.leased,
      room: room.join,
    },
  );
}

export function toEnded(row: EndDeliveriesRow | undefined): Ended {
  return {
    serviceIds: fromJson<number[]>(row?.serviceIds) ?? [],
    claims: fromJson<ClaimedWebhook[]>(row?.claims) ?? [],
    due: row?.due ?? false,
  };
}
