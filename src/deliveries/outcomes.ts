// Writing what became of attempts (settle.ts decides it): the worker's group commit hands a
// batch here, and a few statements log the attempts, end or release the deliveries, and
// promote the next of each chain whose delivery ended.
import { fromJson } from '../db/json.ts';
import { named, type Sql } from '../db/named.ts';
import { prepared } from '../db/prepared.ts';
import { pgIntArray, pgTextArray, pgUuidArray } from '../db/pg-arrays.ts';
import type { ClaimedWebhook } from './claims.ts';
import type { Transaction } from '../db/tx/transaction.ts';
import { handoffLease } from './handoff-lease.ts';
import { leaseSet, UNLEASED } from './lease.ts';
import { previousSecretSql } from './secrets.ts';

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
export async function writeOutcomes(tx: Transaction, node: string, records: readonly OutcomeRecord[]): Promise<number[]> {
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

/**
 * A CTE named `logged`, returning the `service_id` of each logged attempt: one row per attempt
 * in delivery_attempts, for the records that will change their delivery (the same conditions
 * as end() and release()): an attempt whose lease another node has taken over since is not the
 * delivery's any more, and the attempt of that node is logged instead. Attempts are numbered
 * over the delivery's life: a redelivery starts its retries afresh, its attempts go on counting.
 */
function attemptsLog(node: string, records: readonly OutcomeRecord[]): Sql {
  return named(
    `logged as (
       insert into delivery_attempts (delivery_id, service_id, attempt, started_at, duration_ms, status, error, outcome, next_attempt_at, node)
       select d.id, d.service_id, 1 + (select count(*) from delivery_attempts p where p.delivery_id = d.id), a.started_at,
              a.duration_ms, a.status, a.error, a.outcome, a.next_attempt_at, :node::text
         from unnest(:ids::uuid[], :startedAt::timestamptz[], :durationMs::int[], :status::int[], :error::text[], :outcome::text[],
                     :nextAttemptAt::timestamptz[])
              as a(id, started_at, duration_ms, status, error, outcome, next_attempt_at)
         join deliveries d on d.id = a.id
        where d.state = 'pending' and (a.outcome = 'delivered' or d.claimed_by = :node)
       returning service_id)`,
    {
      node,
      ids: pgUuidArray(records.map((r) => r.id)),
      startedAt: pgTextArray(records.map((r) => r.startedAt.toISOString())),
      durationMs: pgIntArray(records.map((r) => Math.max(0, Math.round(r.durationMs)))),
      status: statuses(records),
      error: pgTextArray(records.map((r) => r.error)),
      outcome: pgTextArray(records.map((r) => r.type)),
      nextAttemptAt: nextAttempts(records),
    },
  );
}

function statuses(records: readonly OutcomeRecord[]): string {
  return pgTextArray(records.map((r) => (r.status === null ? null : String(r.status))));
}

function nextAttempts(records: readonly OutcomeRecord[]): string {
  return pgTextArray(records.map((r) => (r.type === 'retry' ? r.nextAttemptAt.toISOString() : null)));
}

/** The distinct Services of the logged attempts, ascending (a push has none). */
const LOGGED_SERVICES = `select distinct service_id as "serviceId" from logged where service_id is not null order by 1`;

/**
 * Ends deliveries (delivered or dead), and makes the next pending delivery of each of their
 * chains ready. The chain locks (taken in ascending order, as the outbox does) keep a
 * concurrent enqueue from missing the promotion: they are taken by a statement of their own, so
 * that the next statement's snapshot shows whatever an enqueue that held them committed. That
 * statement then logs the attempts (`log`), ends the deliveries and promotes the heads at once:
 * all three see the rows as they were before it, so the new head is the first pending delivery
 * of its chain that is not being ended. A chain is (Service, ordering key), Service 0 for pushes
 * (their ordering key is the device). With `last`, its last statement carries the transaction's
 * COMMIT.
 */
async function end(tx: Transaction, node: string, records: readonly Ended[], log: Sql, last: boolean): Promise<number[]> {
  // Only the token that was refused: the app may have registered a new one since.
  const unregistered = records.flatMap((r) => (r.type === 'unregistered' ? [r] : []));
  // Each new head to a Service is leased to this node's worker when it has room (handoff.ts).
  const room = handoffLease(tx.handoffTarget(), 'h.eligible', 'h.service_id', 'h.seq');
  const ids = pgUuidArray(records.map((r) => r.id));
  const locks = named(
    `select pg_advisory_xact_lock(service_id, ordering_key)
       from (select distinct coalesce(service_id, 0) as service_id, ordering_key from deliveries
              where id = any(:ids::uuid[]) and ordering_key is not null
              order by service_id, ordering_key) chains`,
    { ids },
  );
  await prepared(tx, locks.sql, locks.params);
  const statement = named(
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
      ids,
      states: pgTextArray(records.map((r) => (r.type === 'unregistered' ? 'dead' : r.type))),
      status: statuses(records),
      error: pgTextArray(records.map((r) => r.error)),
      node,
      lease: leaseSet(room.lease, 'head.leased', 'd'),
      leased: room.leased,
      room: room.join,
    },
  );
  const [row] = await prepared<{ serviceIds: unknown; claims: unknown; due: boolean }>(tx, statement.sql, statement.params, {
    commit: last && unregistered.length === 0,
  });
  tx.handOff(fromJson<ClaimedWebhook[]>(row?.claims) ?? []);
  if (row?.due) tx.markDue();
  if (unregistered.length > 0) {
    const tokens = named(
      `update devices v set push_token = null, updated_at = now()
         from unnest(:devices::int[], :tokens::text[]) as r(device_id, token)
        where v.id = r.device_id and v.push_token = r.token`,
      { devices: pgIntArray(unregistered.map((r) => r.deviceId)), tokens: pgTextArray(unregistered.map((r) => r.token)) },
    );
    await prepared(tx, tokens.sql, tokens.params, { commit: last });
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
async function release(tx: Transaction, node: string, records: readonly Released[], log: Sql | null): Promise<number[]> {
  const update = named(
    `update deliveries d
        set next_attempt_at = coalesce(r.next_attempt_at, now()), ${UNLEASED}, last_status = r.status, last_error = r.error,
            updated_at = now()
       from unnest(:ids::uuid[], :nextAttemptAt::timestamptz[], :status::int[], :error::text[]) as r(id, next_attempt_at, status, error)
      where d.id = r.id and d.state = 'pending' and d.claimed_by = :node`,
    {
      ids: pgUuidArray(records.map((r) => r.id)),
      nextAttemptAt: nextAttempts(records),
      status: statuses(records),
      error: pgTextArray(records.map((r) => r.error)),
      node,
    },
  );
  const gone = [...new Set(records.flatMap((r) => (r.type === 'gone' ? [r.serviceId] : [])))].sort((a, b) => a - b);
  // The transaction's last statement carries its COMMIT.
  const commit = gone.length === 0;
  const statement = log ? named(`with :log, released as (:update returning d.id) ${LOGGED_SERVICES}`, { log, update }) : update;
  const logged = await prepared<{ serviceId: number }>(tx, statement.sql, statement.params, { commit });
  if (gone.length > 0) {
    const disable = named(
      `update services set disabled_at = now(), disabled_reason = 'webhook_gone', updated_at = now()
        where id = any(:gone::int[]) and disabled_at is null`,
      { gone: pgIntArray(gone) },
    );
    await prepared(tx, disable.sql, disable.params, { commit: true });
  }
  return log ? logged.map((r) => r.serviceId) : [];
}
