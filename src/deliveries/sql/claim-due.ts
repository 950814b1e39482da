// Claims due deliveries (claims.ts): walks the ready index in due order, stops at the batch size,
// caps each bucket at its free slots, locks with SKIP LOCKED and leases what it returns.
import { named, type Sql } from '../../db/named.ts';
import { pgIntArray } from '../../db/pg-arrays.ts';
import type { ClaimedDelivery } from '../claimed.ts';
import { leaseSet, unleased, type Lease } from '../lease.ts';
import { previousSecretSql } from '../secrets.ts';

export interface ClaimDueValues {
  /** At most this many rows in all. */
  total: number;
  /** Per bucket, at most this many (a bucket missing from `freeByBucket` gets `perBucket`). */
  perBucket: number;
  freeByBucket: ReadonlyMap<number, number>;
  lease: Lease;
}

/** A row is the claimed delivery as the worker holds it. */
export type ClaimDueRow = ClaimedDelivery;

export function claimDueSql({ total, perBucket, freeByBucket, lease }: ClaimDueValues): Sql {
  const busyIds = [...freeByBucket.keys()];
  return named(
    `with candidates as (
         select d.id, coalesce(d.service_id, -v.account_id, 0) as bucket, d.next_attempt_at, d.seq
         from deliveries d
         left join services s on s.id = d.service_id
         left join devices v on v.id = d.device_id
         where d.state = 'pending' and d.ready and d.next_attempt_at <= now() and ${unleased('d')}
           and (v.id is not null or d.user_id is not null or (s.disabled_at is null and s.webhook_url is not null))
         order by d.next_attempt_at, d.seq
         limit :total::int
       ),
       capped as (
         select c.id from (
           select c.*, row_number() over (partition by c.bucket order by c.next_attempt_at, c.seq) as rank
           from candidates c
         ) c
         left join unnest(:busy::int[], :free::int[]) as busy(bucket, free) on busy.bucket = c.bucket
         where c.rank <= coalesce(busy.free, :perBucket::int)
       ),
       locked as (
         -- Re-checked on the row itself: a lease taken by another node since our snapshot excludes it.
         select d.id, d.service_id, d.device_id from deliveries d
         where d.id in (select id from capped) and d.state = 'pending' and ${unleased('d')}
         for update skip locked
       )
       update deliveries d
          set :lease, updated_at = now()
         from locked l
         left join services s on s.id = l.service_id
         left join devices v on v.id = l.device_id
         left join push_settings p on p.account_id = v.account_id and p.push_type = v.push_type
        where d.id = l.id
       returning d.id, d.service_id as "serviceId", d.device_id as "deviceId",
                 coalesce(d.service_id, -v.account_id, 0) as bucket, d.kind, d.payload, d.attempts,
                 s.webhook_url as "webhookUrl", s.signing_secret as "signingSecret",
                 ${previousSecretSql('s')} as "previousSigningSecret",
                 coalesce(v.user_id, d.user_id) as "userId", v.type as "deviceType", v.push_token as "pushToken",
                 v.push_type as "pushType", v.push_enabled as "pushEnabled", p.settings as "pushSettings"`,
    {
      total,
      busy: pgIntArray(busyIds),
      free: pgIntArray(busyIds.map((id) => freeByBucket.get(id) ?? 0)),
      perBucket,
      lease: leaseSet(lease, null, 'd'),
    },
  );
}
