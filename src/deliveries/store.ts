// Every statement on the deliveries table after the outbox wrote a row: claiming due
// deliveries under a lease, recording outcomes, and the operator's log and redelivery.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DeliveryKind, DeliveryState } from '../db/entities/index.ts';
import { fromJson } from '../db/json.ts';
import { prepared } from '../db/prepared.ts';
import { pgIntArray, pgTextArray, pgUuidArray } from '../db/pg-arrays.ts';
import type { ClaimedDelivery, ClaimedWebhook } from './claims.ts';
import { handOff, handoffTarget, leaseSql, markDue, roomParams } from './handoff.ts';

export interface ClaimLimits {
  /** At most this many rows in all. */
  total: number;
  /** Per bucket, at most this many (a bucket missing here gets `perBucket`). */
  perBucket: number;
  freeByBucket: ReadonlyMap<number, number>;
  leaseMs: number;
  node: string;
}

/**
 * Claims due deliveries: pending, ready (the head of their chain, so a later delivery never
 * overtakes an earlier one in flight or waiting for a retry), due, not leased, to an enabled
 * Service with a webhook, to a device, or (an email) to a user. Walks the ready index in due order and stops at the
 * batch size. Rows are locked with SKIP LOCKED and leased to `node`; a node that dies
 * mid-attempt loses the lease when it runs out.
 */
export async function claimDue(em: EntityManager, limits: ClaimLimits): Promise<ClaimedDelivery[]> {
  const busyIds = [...limits.freeByBucket.keys()];
  const free = busyIds.map((id) => limits.freeByBucket.get(id) ?? 0);
  // One statement, atomic on its own: no BEGIN/COMMIT round trips around it.
  return prepared<ClaimedDelivery>(
    em,
    `with candidates as (
         select d.id, coalesce(d.service_id, -v.account_id, 0) as bucket, d.next_attempt_at, d.seq
         from deliveries d
         left join services s on s.id = d.service_id
         left join devices v on v.id = d.device_id
         where d.state = 'pending' and d.ready and d.next_attempt_at <= now()
           and (d.claimed_until is null or d.claimed_until < now())
           and (v.id is not null or d.user_id is not null or (s.disabled_at is null and s.webhook_url is not null))
         order by d.next_attempt_at, d.seq
         limit ?::int
       ),
       capped as (
         select c.id from (
           select c.*, row_number() over (partition by c.bucket order by c.next_attempt_at, c.seq) as rank
           from candidates c
         ) c
         left join unnest(?::int[], ?::int[]) as busy(bucket, free) on busy.bucket = c.bucket
         where c.rank <= coalesce(busy.free, ?::int)
       ),
       locked as (
         -- Re-checked on the row itself: a lease taken by another node since our snapshot excludes it.
         select d.id, d.service_id, d.device_id from deliveries d
         where d.id in (select id from capped)
           and d.state = 'pending' and (d.claimed_until is null or d.claimed_until < now())
         for update skip locked
       )
       update deliveries d
          set claimed_until = now() + (?::int * interval '1 millisecond'), claimed_by = ?::text,
              attempts = d.attempts + 1, updated_at = now()
         from locked l
         left join services s on s.id = l.service_id
         left join devices v on v.id = l.device_id
         left join push_settings p on p.account_id = v.account_id and p.push_type = v.push_type
        where d.id = l.id
       returning d.id, d.service_id as "serviceId", d.device_id as "deviceId",
                 coalesce(d.service_id, -v.account_id, 0) as bucket, d.kind, d.payload, d.attempts,
                 s.webhook_url as "webhookUrl", s.signing_secret as "signingSecret",
                 case when s.previous_secret_expires_at > now() then s.previous_signing_secret end as "previousSigningSecret",
                 coalesce(v.user_id, d.user_id) as "userId", v.type as "deviceType", v.push_token as "pushToken",
                 v.push_type as "pushType", v.push_enabled as "pushEnabled", p.settings as "pushSettings"`,
    [limits.total, pgIntArray(busyIds), pgIntArray(free), limits.perBucket, limits.leaseMs, limits.node],
  );
}

/** Gives back claims this node will not attempt (stopping, or held too long): due again at once, the attempt not counted. */
export async function releaseClaims(em: EntityManager, node: string, ids: string[]): Promise<void> {
  await prepared(
    em,
    `update deliveries set claimed_until = null, claimed_by = null, attempts = attempts - 1, updated_at = now()
     where id = any(?::uuid[]) and claimed_by = ? and state = 'pending'`,
    [pgUuidArray(ids), node],
  );
}

/**
 * An email whose customer is connected: asked again at `at`, the attempt not counted (it was
 * not one), so that waiting for a customer who keeps the page open never uses up the retries.
 */
export async function postpone(em: EntityManager, node: string, id: string, at: Date, reason: string): Promise<void> {
  await prepared(
    em,
    `update deliveries set claimed_until = null, claimed_by = null, attempts = attempts - 1, next_attempt_at = ?::timestamptz,
            last_error = ?, updated_at = now()
     where id = ? and claimed_by = ? and state = 'pending'`,
    [at.toISOString(), reason, id, node],
  );
}

export interface AttemptRecord {
  status: number | null;
  error: string | null;
  /** When the request went out, and how long until its answer (or its failure). */
  startedAt: Date;
  durationMs: number;
}

/** What became of one attempt, as written to its delivery. */
export type OutcomeRecord = AttemptRecord & { id: string } & (
    | { type: 'delivered' }
    | { type: 'dead' }
    /** Dead, and the device's token, which its push service called unregistered or invalid, removed. */
    | { type: 'unregistered'; deviceId: number; token: string }
    /** Another attempt is due at `nextAttemptAt`. */
    | { type: 'retry'; nextAttemptAt: Date }
    /** 410 Gone: the Service is switched off; the delivery is due again as soon as it is enabled. */
    | { type: 'gone'; serviceId: number }
  );
type Ended = Extract<OutcomeRecord, { type: 'delivered' | 'dead' | 'unregistered' }>;
type Released = Extract<OutcomeRecord, { type: 'retry' | 'gone' }>;

/**
 * Writes the outcomes of many attempts inside the caller's transaction (the worker's group
 * commit), a few statements whatever their number: for a batch of deliveries that ended, the
 * chain locks, then one statement that logs the attempts, ends the deliveries and promotes the
 * next of their chains. Chains are locked first and Services last, each in ascending order, so
 * batches of two nodes rarely wait on each other in a cycle (and one that deadlocks is written
 * again record by record). A record whose delivery is no longer this node's lease (or no longer
 * pending) changes nothing, except that a delivered one is recorded whoever holds it now: the
 * receiver has it. Returns the Services whose deliveries changed, for the dashboard's live counts.
 * The caller's transaction ends here: the last statement carries its COMMIT (see prepared()).
 */
export async function writeOutcomes(tx: EntityManager, node: string, records: readonly OutcomeRecord[]): Promise<number[]> {
  const ended: Ended[] = [];
  const released: Released[] = [];
  for (const record of records) {
    if (record.type === 'delivered' || record.type === 'dead' || record.type === 'unregistered') ended.push(record);
    else released.push(record);
  }
  // The first statement that changes deliveries logs every attempt of the batch: its snapshot
  // shows the rows as the attempts found them.
  const log = attemptsLog(node, records);
  const loggedByEnd = ended.length > 0 ? await end(tx, node, ended, log, released.length === 0) : null;
  const loggedByRelease = released.length > 0 ? await release(tx, node, released, loggedByEnd ? null : log) : null;
  return loggedByEnd ?? loggedByRelease ?? [];
}

interface AttemptsLog {
  /** A CTE named `logged`, returning the `service_id` of each logged attempt. */
  sql: string;
  params: unknown[];
}

/**
 * One row per attempt in delivery_attempts, for the records that will change their delivery
 * (the same conditions as end() and release()): an attempt whose lease another node has taken
 * over since is not the delivery's any more, and the attempt of that node is logged instead.
 * Attempts are numbered over the delivery's life: a redelivery starts its retries afresh, its
 * attempts go on counting.
 */
function attemptsLog(node: string, records: readonly OutcomeRecord[]): AttemptsLog {
  return {
    sql: `logged as (
       insert into delivery_attempts (delivery_id, service_id, attempt, started_at, duration_ms, status, error, outcome, next_attempt_at, node)
       select d.id, d.service_id, 1 + (select count(*) from delivery_attempts p where p.delivery_id = d.id), a.started_at,
              a.duration_ms, a.status, a.error, a.outcome, a.next_attempt_at, ?::text
         from unnest(?::uuid[], ?::timestamptz[], ?::int[], ?::int[], ?::text[], ?::text[], ?::timestamptz[])
              as a(id, started_at, duration_ms, status, error, outcome, next_attempt_at)
         join deliveries d on d.id = a.id
        where d.state = 'pending' and (a.outcome = 'delivered' or d.claimed_by = ?)
       returning service_id)`,
    params: [
      node,
      pgUuidArray(records.map((r) => r.id)),
      pgTextArray(records.map((r) => r.startedAt.toISOString())),
      pgIntArray(records.map((r) => Math.max(0, Math.round(r.durationMs)))),
      pgTextArray(records.map((r) => (r.status === null ? null : String(r.status)))),
      pgTextArray(records.map((r) => r.error)),
      pgTextArray(records.map((r) => r.type)),
      pgTextArray(records.map((r) => (r.type === 'retry' ? r.nextAttemptAt.toISOString() : null))),
      node,
    ],
  };
}

/** The distinct Services of the logged attempts, ascending (a push has none). */
const LOGGED_SERVICES = `select distinct service_id as "serviceId" from logged where service_id is not null order by 1`;

function servicesOf(rows: ReadonlyArray<{ serviceId: number }>): number[] {
  return rows.map((r) => r.serviceId);
}

export interface DeliveryAttempt {
  attempt: number;
  startedAt: Date;
  durationMs: number;
  status: number | null;
  error: string | null;
  outcome: OutcomeRecord['type'];
  nextAttemptAt: Date | null;
}

/** A delivery's attempts in the order they were made. */
export async function listAttempts(em: EntityManager, deliveryId: string): Promise<DeliveryAttempt[]> {
  return em.getConnection().execute<DeliveryAttempt[]>(
    `select attempt, started_at as "startedAt", duration_ms as "durationMs", status, error, outcome, next_attempt_at as "nextAttemptAt"
       from delivery_attempts where delivery_id = ? order by id`,
    [deliveryId],
  );
}

/**
 * Ends deliveries (delivered or dead), and makes the next pending delivery of each of their
 * chains ready. The chain locks (taken in ascending order, as the outbox does) keep a
 * concurrent enqueue from missing the promotion: they are taken by a statement of their own, so
 * that the next statement's snapshot shows whatever an enqueue that held them committed. That
 * statement then logs the attempts (`log`), ends the deliveries and promotes the heads at once:
 * all three see the rows as they were before it, so the new head is the first pending delivery
 * of its chain that is not being ended. A chain is (Service, ordering key), Service 0 for pushes
 * (their ordering key is the device).
 */
/** With `last`, its last statement carries the transaction's COMMIT. */
async function end(tx: EntityManager, node: string, records: readonly Ended[], log: AttemptsLog, last: boolean): Promise<number[]> {
  // Only the token that was refused: the app may have registered a new one since.
  const unregistered = records.flatMap((r) => (r.type === 'unregistered' ? [r] : []));
  // Each new head to a Service is leased to this node's worker when it has room (handoff.ts).
  const lease = handoffTarget(tx);
  const leased = leaseSql('h.eligible', 'h.service_id', 'h.seq');
  const ids = records.map((r) => r.id);
  await prepared(
    tx,
    `select pg_advisory_xact_lock(service_id, ordering_key)
       from (select distinct coalesce(service_id, 0) as service_id, ordering_key from deliveries
              where id = any(?::uuid[]) and ordering_key is not null
              order by service_id, ordering_key) chains`,
    [pgUuidArray(ids)],
  );
  const [row] = await prepared<{ serviceIds: unknown; claims: unknown; due: boolean }>(
    tx,
    `with ${log.sql},
     ended as (
       update deliveries d
          set state = r.state, delivered_at = case when r.state = 'delivered' then now() end,
              claimed_until = null, claimed_by = null, ready = false,
              last_status = r.status, last_error = r.error, updated_at = now()
         from unnest(?::uuid[], ?::text[], ?::int[], ?::text[]) as r(id, state, status, error)
        where d.id = r.id and d.state = 'pending' and (r.state = 'delivered' or d.claimed_by = ?)
       returning d.id, coalesce(d.service_id, 0) as service_id, d.ordering_key
     ),
     promoted as (
       update deliveries d
          set ready = true,
              claimed_until = case when head.leased then now() + (?::int * interval '1 millisecond') end,
              claimed_by = case when head.leased then ?::text end,
              attempts = d.attempts + case when head.leased then 1 else 0 end
         from (select h.id, ${leased.leased} as leased
                 from (select distinct on (coalesce(e.service_id, 0), e.ordering_key) e.id, e.seq, e.service_id,
                              not e.ready and s.id is not null and s.disabled_at is null and s.webhook_url is not null as eligible
                         from deliveries e
                         join (select distinct service_id, ordering_key from ended where ordering_key is not null) c
                           on coalesce(e.service_id, 0) = c.service_id and e.ordering_key = c.ordering_key
                         left join services s on s.id = e.service_id
                        where e.state = 'pending' and e.id not in (select id from ended)
                        order by coalesce(e.service_id, 0), e.ordering_key, e.seq) h
                 ${leased.join}) head
        where d.id = head.id and not d.ready
       returning d.id, d.service_id, d.kind, d.payload, d.attempts, head.leased
     )
     select (select coalesce(json_agg(l."serviceId"), '[]') from (${LOGGED_SERVICES}) l) as "serviceIds",
            (select coalesce(json_agg(json_build_object(
                      'id', p.id, 'serviceId', p.service_id, 'bucket', p.service_id, 'deviceId', null, 'kind', p.kind,
                      'payload', p.payload, 'attempts', p.attempts, 'webhookUrl', s.webhook_url, 'signingSecret', s.signing_secret,
                      'previousSigningSecret', case when s.previous_secret_expires_at > now() then s.previous_signing_secret end)), '[]')
               from promoted p join services s on s.id = p.service_id where p.leased) as claims,
            exists (select 1 from promoted where not leased) as due`,
    [
      ...log.params,
      pgUuidArray(ids),
      pgTextArray(records.map((r) => (r.type === 'unregistered' ? 'dead' : r.type))),
      pgTextArray(records.map((r) => (r.status === null ? null : String(r.status)))),
      pgTextArray(records.map((r) => r.error)),
      node,
      lease?.leaseMs ?? 0,
      lease?.node ?? null,
      ...roomParams(lease),
    ],
    { commit: last && unregistered.length === 0 },
  );
  handOff(tx, fromJson<ClaimedWebhook[]>(row?.claims) ?? []);
  if (row?.due) markDue(tx);
  if (unregistered.length > 0) {
    await prepared(
      tx,
      `update devices v set push_token = null, updated_at = now()
         from unnest(?::int[], ?::text[]) as r(device_id, token)
        where v.id = r.device_id and v.push_token = r.token`,
      [pgIntArray(unregistered.map((r) => r.deviceId)), pgTextArray(unregistered.map((r) => r.token))],
      { commit: last },
    );
  }
  return fromJson<number[]>(row?.serviceIds) ?? [];
}

/**
 * Gives leases back with the next attempt due: at `nextAttemptAt` for a retry, at once for a
 * 410 (nothing is claimed from a disabled Service, so it waits for the operator). Services
 * that answered 410 are switched off until an operator enables them again; their deliveries
 * stay pending (the receiver did not refuse the payload, the endpoint is gone), so they go
 * out, in order, once the Service is enabled. Logs the attempts too when `log` is given (no
 * delivery of the batch ended); returns the Services of what it logged.
 */
async function release(tx: EntityManager, node: string, records: readonly Released[], log: AttemptsLog | null): Promise<number[]> {
  const update = `update deliveries d
        set next_attempt_at = coalesce(r.next_attempt_at, now()), claimed_until = null, claimed_by = null,
            last_status = r.status, last_error = r.error, updated_at = now()
       from unnest(?::uuid[], ?::timestamptz[], ?::int[], ?::text[]) as r(id, next_attempt_at, status, error)
      where d.id = r.id and d.state = 'pending' and d.claimed_by = ?`;
  const params = [
    pgUuidArray(records.map((r) => r.id)),
    pgTextArray(records.map((r) => (r.type === 'retry' ? r.nextAttemptAt.toISOString() : null))),
    pgTextArray(records.map((r) => (r.status === null ? null : String(r.status)))),
    pgTextArray(records.map((r) => r.error)),
    node,
  ];
  const gone = [...new Set(records.flatMap((r) => (r.type === 'gone' ? [r.serviceId] : [])))].sort((a, b) => a - b);
  // The transaction's last statement carries its COMMIT.
  const commit = gone.length === 0;
  let logged: Array<{ serviceId: number }> = [];
  if (log) {
    logged = await prepared<{ serviceId: number }>(
      tx,
      `with ${log.sql}, released as (${update} returning d.id) ${LOGGED_SERVICES}`,
      [...log.params, ...params],
      { commit },
    );
  } else {
    await prepared(tx, update, params, { commit });
  }
  if (gone.length > 0) {
    await prepared(
      tx,
      `update services set disabled_at = now(), disabled_reason = 'webhook_gone', updated_at = now()
        where id = any(?::int[]) and disabled_at is null`,
      [pgIntArray(gone)],
      { commit: true },
    );
  }
  return servicesOf(logged);
}

export async function countPending(em: EntityManager): Promise<number> {
  const [row] = await em
    .getConnection()
    .execute<Array<{ count: string }>>(`select count(*) as count from deliveries where state = 'pending'`);
  return Number(row?.count ?? 0);
}

export interface DeliveryLogEntry {
  id: string;
  serviceId: number | null;
  deviceId: number | null;
  /** An email's user. */
  userId: number | null;
  kind: DeliveryKind;
  state: DeliveryState;
  /** The head of its chain: pending and not ready means it waits for an earlier one. */
  ready: boolean;
  attempts: number;
  nextAttemptAt: Date;
  lastStatus: number | null;
  lastError: string | null;
  payload: string;
  createdAt: Date;
  deliveredAt: Date | null;
  seq: string;
}

const LOG_COLUMNS = `id, service_id as "serviceId", device_id as "deviceId", user_id as "userId", kind, state, ready, attempts, next_attempt_at as "nextAttemptAt",
  last_status as "lastStatus", last_error as "lastError", payload, created_at as "createdAt",
  delivered_at as "deliveredAt", seq`;

/**
 * Newest first, in pages: `beforeSeq` is the `seq` of the last row of the previous page. Also
 * by creation time (`since` included, `until` not) and by user (the chain's ordering key).
 */
export async function listDeliveries(
  em: EntityManager,
  query: {
    serviceId: number;
    state?: DeliveryState | undefined;
    limit: number;
    beforeSeq?: number | undefined;
    since?: string | undefined;
    until?: string | undefined;
    userId?: number | undefined;
  },
): Promise<DeliveryLogEntry[]> {
  return em.getConnection().execute<DeliveryLogEntry[]>(
    `select ${LOG_COLUMNS} from deliveries
      where service_id = ? and (?::text is null or state = ?) and (?::bigint is null or seq < ?)
        and (?::timestamptz is null or created_at >= ?::timestamptz)
        and (?::timestamptz is null or created_at < ?::timestamptz)
        and (?::int is null or ordering_key = ?)
      order by seq desc limit ?`,
    [
      query.serviceId,
      query.state ?? null,
      query.state ?? null,
      query.beforeSeq ?? null,
      query.beforeSeq ?? null,
      query.since ?? null,
      query.since ?? null,
      query.until ?? null,
      query.until ?? null,
      query.userId ?? null,
      query.userId ?? null,
      query.limit,
    ],
  );
}

/** The pushes to an account's devices, newest first, in pages as listDeliveries. */
export async function listPushDeliveries(
  em: EntityManager,
  query: { accountId: number; state?: DeliveryState | undefined; limit: number; beforeSeq?: number | undefined },
): Promise<DeliveryLogEntry[]> {
  return em.getConnection().execute<DeliveryLogEntry[]>(
    `select ${LOG_COLUMNS} from deliveries
      where device_id in (select id from devices where account_id = ?)
        and (?::text is null or state = ?) and (?::bigint is null or seq < ?)
      order by seq desc limit ?`,
    [query.accountId, query.state ?? null, query.state ?? null, query.beforeSeq ?? null, query.beforeSeq ?? null, query.limit],
  );
}

/** The emails to an account's users (answers by email), newest first, in pages as listDeliveries. */
export async function listEmailDeliveries(
  em: EntityManager,
  query: { accountId: number; state?: DeliveryState | undefined; limit: number; beforeSeq?: number | undefined },
): Promise<DeliveryLogEntry[]> {
  return em.getConnection().execute<DeliveryLogEntry[]>(
    `select ${LOG_COLUMNS} from deliveries
      where user_id in (select id from users where account_id = ?)
        and (?::text is null or state = ?) and (?::bigint is null or seq < ?)
      order by seq desc limit ?`,
    [query.accountId, query.state ?? null, query.state ?? null, query.beforeSeq ?? null, query.beforeSeq ?? null, query.limit],
  );
}

export async function findDelivery(em: EntityManager, id: string): Promise<DeliveryLogEntry | null> {
  const rows = await em.getConnection().execute<DeliveryLogEntry[]>(`select ${LOG_COLUMNS} from deliveries where id = ?`, [id]);
  return rows[0] ?? null;
}

/**
 * Makes the Service's deliveries that wait for a later attempt due now: each is the head of
 * its conversation's chain (what comes after it waits for it) and not being sent. After the
 * Service's outage its conversations need not wait out the retry schedule (5 min, then 30 min,
 * and so on); the attempts count on, so a failure goes on down the schedule. Returns how many.
 */
export async function retryWaiting(em: EntityManager, serviceId: number): Promise<number> {
  const rows = await em.getConnection().execute<Array<{ id: string }>>(
    `update deliveries set next_attempt_at = now(), updated_at = now()
      where service_id = ? and state = 'pending' and ready and next_attempt_at > now()
        and (claimed_until is null or claimed_until < now())
      returning id`,
    [serviceId],
    'all',
    em.getTransactionContext(),
  );
  return rows.length;
}

/**
 * Puts a dead delivery back with fresh attempts; null when it is not dead (any more). It is
 * sent at once, as its own head: the operator asked for it, and what came after it in its
 * chain has already gone on without it.
 */
export async function redeliver(em: EntityManager, id: string): Promise<DeliveryLogEntry | null> {
  const rows = await em.getConnection().execute<DeliveryLogEntry[]>(
    `update deliveries set state = 'pending', ready = true, attempts = 0, next_attempt_at = now(), last_error = null,
            claimed_until = null, claimed_by = null, updated_at = now()
      where id = ? and state = 'dead'
      returning ${LOG_COLUMNS}`,
    [id],
    'all',
    em.getTransactionContext(),
  );
  return rows[0] ?? null;
}
