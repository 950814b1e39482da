// Every statement on the deliveries table after the outbox wrote a row: claiming due
// deliveries under a lease, recording outcomes, and the operator's log and redelivery.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DeliveryKind, DeliveryState } from '../db/entities/index.ts';
import { pgIntArray } from './outbox.ts';

export interface ClaimedDelivery {
  id: string;
  serviceId: number;
  kind: DeliveryKind;
  payload: string;
  /** Including the attempt about to be made. */
  attempts: number;
  webhookUrl: string;
  signingSecret: string;
}

export interface ClaimLimits {
  /** At most this many rows in all. */
  total: number;
  /** Per Service, at most this many (a Service missing here gets `perService`). */
  perService: number;
  freeByService: ReadonlyMap<number, number>;
  leaseMs: number;
  node: string;
}

/**
 * Claims due deliveries: pending, due, not leased, to an enabled Service with a webhook, and
 * the head of their (Service, ordering key) chain, so a later delivery never overtakes an
 * earlier one that is in flight or waiting for a retry. Rows are locked with SKIP LOCKED and
 * leased to `node`; a node that dies mid-attempt loses the lease when it runs out.
 */
export async function claimDue(em: EntityManager, limits: ClaimLimits): Promise<ClaimedDelivery[]> {
  const busyIds = [...limits.freeByService.keys()];
  const free = busyIds.map((id) => limits.freeByService.get(id) ?? 0);
  return em.transactional(async (tx) =>
    tx.getConnection().execute<ClaimedDelivery[]>(
      `with due as (
         select d.id, d.service_id, d.next_attempt_at, d.seq,
                row_number() over (partition by d.service_id order by d.next_attempt_at, d.seq) as rank
         from deliveries d
         join services s on s.id = d.service_id
         where d.state = 'pending'
           and d.next_attempt_at <= now()
           and (d.claimed_until is null or d.claimed_until < now())
           and s.disabled_at is null and s.webhook_url is not null
           and (d.ordering_key is null or not exists (
             select 1 from deliveries e
             where e.service_id = d.service_id and e.ordering_key = d.ordering_key
               and e.state = 'pending' and e.seq < d.seq))
       ),
       capped as (
         select due.id from due
         left join unnest(?::int[], ?::int[]) as busy(service_id, free) on busy.service_id = due.service_id
         where due.rank <= coalesce(busy.free, ?)
         order by due.next_attempt_at, due.seq
         limit ?
       ),
       locked as (
         -- Re-checked on the row itself: a lease taken by another node since our snapshot excludes it.
         select d.id from deliveries d
         where d.id in (select id from capped)
           and d.state = 'pending' and (d.claimed_until is null or d.claimed_until < now())
         for update skip locked
       )
       update deliveries d
          set claimed_until = now() + (? * interval '1 millisecond'), claimed_by = ?,
              attempts = d.attempts + 1, updated_at = now()
         from locked, services s
        where d.id = locked.id and s.id = d.service_id
       returning d.id, d.service_id as "serviceId", d.kind, d.payload, d.attempts,
                 s.webhook_url as "webhookUrl", s.signing_secret as "signingSecret"`,
      [pgIntArray(busyIds), pgIntArray(free), limits.perService, limits.total, limits.leaseMs, limits.node],
      'all',
      tx.getTransactionContext(),
    ),
  );
}

export interface AttemptRecord {
  status: number | null;
  error: string | null;
}

export async function markDelivered(em: EntityManager, id: string, record: AttemptRecord): Promise<void> {
  await em.getConnection().execute(
    `update deliveries set state = 'delivered', delivered_at = now(), claimed_until = null, claimed_by = null,
            last_status = ?, last_error = null, updated_at = now()
      where id = ? and state = 'pending'`,
    [record.status, id],
  );
}

/** Releases the lease with the next attempt due at `nextAttemptAt`, if this node still holds it. */
export async function markRetry(
  em: EntityManager,
  id: string,
  node: string,
  nextAttemptAt: Date,
  record: AttemptRecord,
): Promise<void> {
  await em.getConnection().execute(
    `update deliveries set next_attempt_at = ?, claimed_until = null, claimed_by = null,
            last_status = ?, last_error = ?, updated_at = now()
      where id = ? and state = 'pending' and claimed_by = ?`,
    [nextAttemptAt, record.status, record.error, id, node],
  );
}

export async function markDead(em: EntityManager, id: string, node: string, record: AttemptRecord): Promise<void> {
  await em.getConnection().execute(
    `update deliveries set state = 'dead', claimed_until = null, claimed_by = null,
            last_status = ?, last_error = ?, updated_at = now()
      where id = ? and state = 'pending' and claimed_by = ?`,
    [record.status, record.error, id, node],
  );
}

/**
 * The endpoint answered 410 Gone: the Service's webhook is switched off until an operator
 * enables it again. The delivery stays pending (the receiver did not refuse the payload, the
 * endpoint is gone), so it and those after it go out, in order, once the Service is enabled.
 */
export async function markGone(em: EntityManager, delivery: ClaimedDelivery, node: string, record: AttemptRecord): Promise<void> {
  await em.transactional(async (tx) => {
    const ctx: unknown = tx.getTransactionContext();
    await tx.getConnection().execute(
      `update services set disabled_at = now(), disabled_reason = 'webhook_gone', updated_at = now()
        where id = ? and disabled_at is null`,
      [delivery.serviceId],
      'run',
      ctx,
    );
    await tx.getConnection().execute(
      `update deliveries set claimed_until = null, claimed_by = null, next_attempt_at = now(),
              last_status = ?, last_error = ?, updated_at = now()
        where id = ? and state = 'pending' and claimed_by = ?`,
      [record.status, record.error, delivery.id, node],
      'run',
      ctx,
    );
  });
}

export async function countPending(em: EntityManager): Promise<number> {
  const [row] = await em
    .getConnection()
    .execute<Array<{ count: string }>>(`select count(*) as count from deliveries where state = 'pending'`);
  return Number(row?.count ?? 0);
}

export interface DeliveryLogEntry {
  id: string;
  serviceId: number;
  kind: DeliveryKind;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: Date;
  lastStatus: number | null;
  lastError: string | null;
  payload: string;
  createdAt: Date;
  deliveredAt: Date | null;
  seq: string;
}

const LOG_COLUMNS = `id, service_id as "serviceId", kind, state, attempts, next_attempt_at as "nextAttemptAt",
  last_status as "lastStatus", last_error as "lastError", payload, created_at as "createdAt",
  delivered_at as "deliveredAt", seq`;

/** Newest first, in pages: `beforeSeq` is the `seq` of the last row of the previous page. */
export async function listDeliveries(
  em: EntityManager,
  query: { serviceId: number; state?: DeliveryState | undefined; limit: number; beforeSeq?: number | undefined },
): Promise<DeliveryLogEntry[]> {
  return em.getConnection().execute<DeliveryLogEntry[]>(
    `select ${LOG_COLUMNS} from deliveries
      where service_id = ? and (?::text is null or state = ?) and (?::bigint is null or seq < ?)
      order by seq desc limit ?`,
    [
      query.serviceId,
      query.state ?? null,
      query.state ?? null,
      query.beforeSeq ?? null,
      query.beforeSeq ?? null,
      query.limit,
    ],
  );
}

export async function findDelivery(em: EntityManager, id: string): Promise<DeliveryLogEntry | null> {
  const rows = await em
    .getConnection()
    .execute<DeliveryLogEntry[]>(`select ${LOG_COLUMNS} from deliveries where id = ?`, [id]);
  return rows[0] ?? null;
}

/** Puts a dead delivery back in line with fresh attempts; null when it is not dead (any more). */
export async function redeliver(em: EntityManager, id: string): Promise<DeliveryLogEntry | null> {
  const rows = await em.getConnection().execute<DeliveryLogEntry[]>(
    `update deliveries set state = 'pending', attempts = 0, next_attempt_at = now(), last_error = null,
            claimed_until = null, claimed_by = null, updated_at = now()
      where id = ? and state = 'dead'
      returning ${LOG_COLUMNS}`,
    [id],
  );
  return rows[0] ?? null;
}
