// The one place that writes deliveries. Whoever causes a payload hands it here inside the
// transaction of the change (the Transaction object, db/tx/transaction.ts), so the outbox rows
// commit with the change or not at all; the deliveries it leases to this node's worker, and
// whether it left others due, are recorded on that object for the worker.
import { prepared } from '../db/prepared.ts';
import { randomUUID } from 'node:crypto';
import type { DeliveryKind } from '../db/entities/index.ts';
import { pgIntArray } from '../db/pg-arrays.ts';
import { named } from '../db/named.ts';
import type { Transaction } from '../db/tx/transaction.ts';
import type { ClaimedWebhook } from './claims.ts';
import { handoffLease } from './handoff-lease.ts';
import { LEASE_COLUMNS, leaseValues } from './lease.ts';
import { previousSecretSql } from './secrets.ts';

export interface DeliveryRequest {
  kind: DeliveryKind;
  /** Serialised once, here: every attempt sends and signs exactly these bytes. */
  payload: object;
  /** Service ids. Services without a webhook URL, or whose webhook does not want this kind, receive nothing. */
  recipients: number[];
  /**
   * Standby Services (docs/decisions/switchboard.md): they receive the payload with
   * `"standby": true` added, chained like the recipients' deliveries. A recipient is never also
   * a standby one.
   */
  standby?: readonly number[] | undefined;
  /** Deliveries with the same key to the same Service arrive in the order they were enqueued. */
  orderingKey: number | null;
}

/** A payload for every push-enabled device of a user (docs/push.md). */
export interface PushRequest {
  kind: Extract<DeliveryKind, 'push_message' | 'push_event'>;
  userId: number;
  /** The data map the apps read (presenters/push-payload.ts). */
  payload: Record<string, string>;
}

/**
 * The chain lock as SQL over two columns, for a statement that takes it beside other locks
 * (lockUsers) and then records it on the transaction (Transaction.chainsLocked). Taken in (service, key) order, as here.
 */
export function chainLockSql(serviceColumn: string, keyColumn: string): string {
  return `pg_advisory_xact_lock(${serviceColumn}, ${keyColumn})`;
}

/** Adds the payload's deliveries to the caller's transaction; returns their ids (the `webhook-id`s). */
export async function enqueue(tx: Transaction, request: DeliveryRequest): Promise<string[]> {
  const [ids] = await enqueueAll(tx, [request]);
  return ids ?? [];
}

interface Row {
  id: string;
  service_id: number;
  ordering_key: number | null;
  kind: DeliveryKind;
  payload: string;
  /** The first of its chain in this call: only it can be ready, and only if the chain has nothing pending. */
  first: boolean;
  n: number;
}

/**
 * Several payloads at once, in order (a group commit of agent messages writes all of its
 * deliveries here): one statement whatever their number, and one more for chain locks the
 * transaction does not hold yet. Returns each request's delivery ids.
 */
export async function enqueueAll(tx: Transaction, requests: readonly DeliveryRequest[]): Promise<string[][]> {
  const deliveries = await deliveriesCte(tx, requests);
  if (!deliveries) return requests.map(() => []);
  const rows = await prepared<WrittenRow>(tx, `with ${deliveries.sql} select * from ${DELIVERIES_OUT} order by n`, deliveries.params);
  return deliveries.written(rows);
}

/** The CTE of deliveriesCte that returns what was written, one row per delivery, with `n` its position. */
export const DELIVERIES_OUT = 'deliveries_out';

/** A row of DELIVERIES_OUT. */
export type WrittenRow = Omit<ClaimedWebhook, 'deviceId' | 'attempts' | 'payload'> & { n: number; ready: boolean; leased: boolean };

export interface DeliveriesCte {
  /** CTEs (`deliveries_in`, `deliveries_leased`, `deliveries_inserted`, DELIVERIES_OUT) for a `with` list. */
  sql: string;
  params: unknown[];
  /** Given DELIVERIES_OUT's rows: hands the leased ones to the worker at commit, and returns each request's delivery ids. */
  written(rows: readonly WrittenRow[]): string[][];
}

/**
 * The deliveries of `requests` as CTEs, for a statement that also writes what causes them (a
 * group commit of client messages writes its messages and their deliveries in one statement),
 * or for enqueueAll. Takes the chain locks the transaction does not hold yet first; null when
 * there is nothing to write.
 */
export async function deliveriesCte(tx: Transaction, requests: readonly DeliveryRequest[]): Promise<DeliveriesCte | null> {
  const rows: Row[] = [];
  const chains = new Map<string, [number, number]>();
  const planned = requests.map((request) => {
    const payload = JSON.stringify(request.payload);
    const recipients = new Set(request.recipients);
    const standby = (request.standby ?? []).filter((id) => !recipients.has(id));
    // Serialised once per role: the owners' bytes are exactly the spec's payload.
    const standbyPayload = standby.length > 0 ? JSON.stringify({ ...request.payload, standby: true }) : '';
    const standbyIds = new Set(standby);
    return [...recipients, ...standbyIds]
      .sort((a, b) => a - b)
      .map((serviceId) => {
        const key = request.orderingKey;
        const chain = `${serviceId}:${key}`;
        const first = key !== null && !chains.has(chain);
        if (first) chains.set(chain, [serviceId, key]);
        const row: Row = {
          id: randomUUID(),
          service_id: serviceId,
          ordering_key: key,
          kind: request.kind,
          payload: standbyIds.has(serviceId) ? standbyPayload : payload,
          first,
          n: rows.length,
        };
        rows.push(row);
        return row.id;
      });
  });
  if (rows.length === 0) return null;
  const locks = [...chains.values()].filter(([serviceId, key]) => !tx.holdsChain(serviceId, key));
  if (locks.length > 0) {
    // The chain lock (also taken when a delivery of the chain completes) makes "is there an
    // earlier pending delivery?" and the promotion of the next one exclude each other. Taken
    // in one global order, so transactions that lock several chains cannot deadlock.
    await prepared(
      tx,
      `select ${chainLockSql('c.service_id', 'c.ordering_key')}
       from unnest(?::int[], ?::int[]) as c(service_id, ordering_key)
       order by c.service_id, c.ordering_key`,
      [pgIntArray(locks.map(([serviceId]) => serviceId)), pgIntArray(locks.map(([, key]) => key))],
    );
    tx.chainsLocked(locks);
  }
  // Services without a webhook URL receive nothing, nor those whose webhook does not want the
  // payload's kind (messages, events, or actions: everything else). Inserted in request order,
  // so `seq` keeps it.
  // A row that is ready, to an enabled Service, is leased to this node's worker when it has room
  // (handoff.ts), and what the worker needs to send it comes back with it.
  const target = tx.handoffTarget();
  const room = handoffLease(target, 'r.ready and r.enabled', 'r.service_id', 'r.n');
  const statement = named(
    // Whether a chain has a pending delivery is looked up row by row in the chain index (the
    // lateral's limit keeps the planner from hashing every pending delivery, which a backlog
    // makes many); materialized, so it is looked up once.
    `deliveries_in as materialized (
       select r.id, r.service_id, r.ordering_key, r.kind, r.payload, r.n,
              r.ordering_key is null or (r.first and earlier.pending is null) as ready,
              s.disabled_at is null as enabled, s.webhook_url, s.signing_secret,
              ${previousSecretSql('s')} as previous_signing_secret
       from jsonb_to_recordset(:rows::jsonb)
            as r(id uuid, service_id int, ordering_key int, kind text, payload text, first boolean, n int)
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
  return {
    sql: statement.sql,
    params: statement.params,
    written: (inserted) => {
      if (inserted.length === 0) return planned.map(() => []);
      tx.handOff(
        // The payload is not read back: it is the one serialised here.
        inserted.flatMap(({ ready, leased, n, ...row }) =>
          leased ? [{ ...row, payload: rows[n]?.payload ?? '', deviceId: null, attempts: 1 }] : [],
        ),
      );
      if (inserted.some((row) => row.ready && !row.leased)) tx.markDue();
      const kept = new Set(inserted.map((r) => r.id));
      return planned.map((ids) => ids.filter((id) => kept.has(id)));
    },
  };
}

/**
 * Pushes, in order, to every device of each user that can receive them: push enabled, a
 * token, and push settings of its account for its push type. One delivery per device, chained
 * per device (ordering key = device id; 0 stands for "no Service" in the chain lock, which
 * Service ids, from 1, never meet). Returns the delivery ids written per request. With
 * `commit`, its insert is the transaction's last statement and carries the COMMIT (prepared()).
 */
export async function enqueuePushes(
  tx: Transaction,
  requests: readonly PushRequest[],
  { commit = false }: { commit?: boolean } = {},
): Promise<string[][]> {
  if (requests.length === 0) return [];
  const userIds = [...new Set(requests.map((r) => r.userId))];
  // The chains' locks first, in device order (as the worker takes them when a push completes).
  const devices = await prepared<{ id: number; userId: number }>(
    tx,
    `select v.id, v.user_id as "userId", pg_advisory_xact_lock(0, v.id)
       from (select d.id, d.user_id from devices d
              join push_settings p on p.account_id = d.account_id and p.push_type = d.push_type
             where d.user_id = any(?::int[]) and d.push_enabled and d.push_token is not null
             order by d.id) v`,
    [pgIntArray(userIds)],
  );
  const rows = requests
    .flatMap((request, n) =>
      devices
        .filter((device) => device.userId === request.userId)
        .map((device) => ({ id: randomUUID(), device_id: device.id, kind: request.kind, payload: JSON.stringify(request.payload), n })),
    )
    .map((row, i) => ({ ...row, i }));
  if (rows.length === 0) return requests.map(() => []);
  // Only the first of a device's chain can be ready, and only if nothing of it is pending.
  await prepared(
    tx,
    `insert into deliveries (id, device_id, ordering_key, kind, payload, ready)
     select r.id, r.device_id, r.device_id, r.kind, r.payload,
            row_number() over (partition by r.device_id order by r.i) = 1 and not exists (
              select 1 from deliveries e
              where coalesce(e.service_id, 0) = 0 and e.ordering_key = r.device_id and e.state = 'pending')
     from jsonb_to_recordset(?::jsonb) as r(id uuid, device_id int, kind text, payload text, i int)
     order by r.i`,
    [JSON.stringify(rows)],
    { commit },
  );
  // Pushes are claimed (the claim reads the device and its push settings as they are then).
  tx.markDue();
  return requests.map((_, n) => rows.filter((row) => row.n === n).map((row) => row.id));
}

/** An answer by email (docs/operations.md): the agent message that causes it, to its user. */
export interface EmailRequest {
  userId: number;
  /** The newest agent message of the user in this transaction: the email covers the unseen answers up to it. */
  throughMessageId: number;
}

/**
 * One email delivery per user of `requests` (the last request of a user wins) that has an email
 * address and did not unsubscribe, not to be attempted before `notBeforeSeconds` from now.
 * Chained per user: Service 0 in the chain lock with the negated user id as the ordering key
 * (device ids, the pushes' keys, are positive). At send time a delivery whose user received a
 * later agent message ends without sending (that message's delivery, later in the chain, sends
 * the whole burst), so a burst of answers makes one email. With `commit`, the insert carries
 * the COMMIT (prepared()). Returns the delivery ids written.
 */
export async function enqueueEmails(
  tx: Transaction,
  requests: readonly EmailRequest[],
  { notBeforeSeconds, commit = false }: { notBeforeSeconds: number; commit?: boolean },
): Promise<string[]> {
  const through = new Map<number, number>();
  for (const request of requests) through.set(request.userId, Math.max(through.get(request.userId) ?? 0, request.throughMessageId));
  if (through.size === 0) return [];
  const rows = [...through]
    .sort(([a], [b]) => a - b)
    .map(([userId, throughMessageId]) => ({ id: randomUUID(), user_id: userId, payload: JSON.stringify({ userId, throughMessageId }) }));
  const chains = rows.map((r): [number, number] => [0, -r.user_id]);
  const locks = chains.filter(([service, key]) => !tx.holdsChain(service, key));
  if (locks.length > 0) {
    // A statement of its own, as for pushes: the insert's snapshot must show whatever a completion
    // that held a chain lock committed, or a new row could miss the promotion and wait for ever.
    await prepared(tx, `select pg_advisory_xact_lock(0, c.key) from (select unnest(?::int[]) as key order by 1) c`, [
      pgIntArray(locks.map(([, key]) => key)),
    ]);
    tx.chainsLocked(locks);
  }
  const written = await prepared<{ id: string }>(
    tx,
    `insert into deliveries (id, user_id, ordering_key, kind, payload, ready, next_attempt_at)
     select r.id, u.id, -u.id, 'email', r.payload,
            not exists (select 1 from deliveries e
                         where coalesce(e.service_id, 0) = 0 and e.ordering_key = -u.id and e.state = 'pending'),
            now() + (?::int * interval '1 second')
       from jsonb_to_recordset(?::jsonb) as r(id uuid, user_id int, payload text)
       join users u on u.id = r.user_id and u.email is not null and u.email_unsubscribed_at is null
      order by u.id
     returning id`,
    [notBeforeSeconds, JSON.stringify(rows)],
    { commit },
  );
  // Not due yet: the worker's polls claim them when they are.
  return written.map((row) => row.id);
}

/**
 * The transcript a customer asked for (email/transcript.ts): one email delivery of the user's
 * whole conversation up to `throughMessageId`, due now, in the user's chain of emails (an
 * answer's email before it goes first). Its payload names `transcriptThrough`, never
 * `throughMessageId`: a transcript does not count as an answer's email sent.
 */
export async function enqueueTranscript(tx: Transaction, request: { userId: number; throughMessageId: number }): Promise<string> {
  const key = -request.userId;
  if (!tx.holdsChain(0, key)) {
    await prepared(tx, `select pg_advisory_xact_lock(0, ?::int)`, [key]);
    tx.chainsLocked([[0, key]]);
  }
  const id = randomUUID();
  await prepared(
    tx,
    `insert into deliveries (id, user_id, ordering_key, kind, payload, ready, next_attempt_at)
     values (?, ?, ?, 'email', ?,
             not exists (select 1 from deliveries e where coalesce(e.service_id, 0) = 0 and e.ordering_key = ? and e.state = 'pending'),
             now())`,
    [id, request.userId, key, JSON.stringify({ userId: request.userId, transcriptThrough: request.throughMessageId }), key],
  );
  tx.markDue();
  return id;
}
