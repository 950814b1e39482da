// A delivery this node holds under a lease (lease.ts), with what sending it needs: claimed here
// or handed over by the commit that wrote it (handoff.ts); and giving claims back unattempted.
import type { EntityManager } from '@mikro-orm/postgresql';
import { named } from '../db/named.ts';
import { prepared } from '../db/prepared.ts';
import { pgIntArray, pgUuidArray } from '../db/pg-arrays.ts';
import { leaseSet, unleased, UNLEASED, type Lease } from './lease.ts';
import { previousSecretSql } from './secrets.ts';

export type { ClaimedBase, ClaimedDelivery, ClaimedEmail, ClaimedPush, ClaimedWebhook } from './claimed.ts';
import type { ClaimedDelivery } from './claimed.ts';

export interface ClaimLimits {
  /** At most this many rows in all. */
  total: number;
  /** Per bucket, at most this many (a bucket missing here gets `perBucket`). */
  perBucket: number;
  freeByBucket: ReadonlyMap<number, number>;
  lease: Lease;
}

/**
 * Claims due deliveries: pending, ready (the head of their chain, so a later delivery never
 * overtakes an earlier one in flight or waiting for a retry), due, not leased, to an enabled
 * Service with a webhook, to a device, or (an email) to a user. Walks the ready index in due
 * order and stops at the batch size. Rows are locked with SKIP LOCKED and leased; a node that
 * dies mid-attempt loses the lease when it runs out.
 */
export async function claimDue(em: EntityManager, limits: ClaimLimits): Promise<ClaimedDelivery[]> {
  const busyIds = [...limits.freeByBucket.keys()];
  const { sql, params } = named(
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
      total: limits.total,
      busy: pgIntArray(busyIds),
      free: pgIntArray(busyIds.map((id) => limits.freeByBucket.get(id) ?? 0)),
      perBucket: limits.perBucket,
      lease: leaseSet(limits.lease, null, 'd'),
    },
  );
  // One statement, atomic on its own: no BEGIN/COMMIT round trips around it.
  return prepared<ClaimedDelivery>(em, sql, params);
}

/** Gives back claims this node will not attempt (stopping, or held too long): due again at once, the attempt not counted. */
export async function releaseClaims(em: EntityManager, node: string, ids: string[]): Promise<void> {
  const { sql, params } = named(
    `update deliveries set ${UNLEASED}, attempts = attempts - 1, updated_at = now()
     where id = any(:ids::uuid[]) and claimed_by = :node and state = 'pending'`,
    { ids: pgUuidArray(ids), node },
  );
  await prepared(em, sql, params);
}

/**
 * An email whose customer is connected: asked again at `at`, the attempt not counted (it was
 * not one), so that waiting for a customer who keeps the page open never uses up the retries.
 */
export async function postpone(em: EntityManager, node: string, id: string, at: Date, reason: string): Promise<void> {
  const { sql, params } = named(
    `update deliveries set ${UNLEASED}, attempts = attempts - 1, next_attempt_at = :at::timestamptz, last_error = :reason,
            updated_at = now()
     where id = :id and claimed_by = :node and state = 'pending'`,
    { at: at.toISOString(), reason, id, node },
  );
  await prepared(em, sql, params);
}
