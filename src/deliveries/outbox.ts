// The one place that writes deliveries. Whoever causes a payload hands it here inside the
// transaction of the change (the Transaction object, db/tx/transaction.ts), so the outbox rows
// commit with the change or not at all; the deliveries it leases to this node's worker, and
// whether it left others due, are recorded on that object for the worker.
import { randomUUID } from 'node:crypto';
import type { DeliveryKind } from '../db/entities/index.ts';
import { prepared } from '../db/prepared.ts';
import type { Sql } from '../db/named.ts';
import type { Transaction } from '../db/tx/transaction.ts';
import { handoffLease } from './handoff-lease.ts';
import { deliveriesCteSql, insertDeliveriesSql, type DeliveryRow, type WrittenRow } from './sql/deliveries-cte.ts';
import { insertEmailsSql, type InsertEmailsRow } from './sql/insert-emails.ts';
import { insertPushesSql } from './sql/insert-pushes.ts';
import { insertTranscriptSql } from './sql/insert-transcript.ts';
import { lockChainsSql } from './sql/lock-chains.ts';
import { lockUserChainsSql } from './sql/lock-user-chains.ts';
import { pushDevicesSql, type PushDevicesRow } from './sql/push-devices.ts';

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
  /**
   * The payload is that of the message the statement writes at this position of its rows, whose
   * id the statement draws (messages-at-once.ts): the payload's `id` is 0, and the statement puts
   * the message's id in its place.
   */
  messageOf?: number;
}

/** A payload for every push-enabled device of a user (docs/push.md). */
export interface PushRequest {
  kind: Extract<DeliveryKind, 'push_message' | 'push_event'>;
  userId: number;
  /** The data map the apps read (presenters/push-payload.ts). */
  payload: Record<string, string>;
}

/** Adds the payload's deliveries to the caller's transaction; returns their ids (the `webhook-id`s). */
export async function enqueue(tx: Transaction, request: DeliveryRequest): Promise<string[]> {
  const [ids] = await enqueueAll(tx, [request]);
  return ids ?? [];
}

/**
 * Several payloads at once, in order: one statement whatever their number, and one more for
 * chain locks the transaction does not hold yet. Returns each request's delivery ids.
 */
export async function enqueueAll(tx: Transaction, requests: readonly DeliveryRequest[]): Promise<string[][]> {
  const deliveries = await deliveriesCte(tx, requests);
  if (!deliveries) return requests.map(() => []);
  const rows = await prepared<WrittenRow>(tx, insertDeliveriesSql(deliveries.cte));
  return deliveries.written(rows);
}

export interface DeliveriesCte {
  /** The CTEs of sql/deliveries-cte.ts, for a `with` list. */
  cte: Sql;
  /**
   * Given DELIVERIES_OUT's rows (and, for requests with `messageOf`, the ids of the statement's
   * messages): hands the leased ones to the worker at commit, and returns each request's delivery ids.
   */
  written(rows: readonly WrittenRow[], messageIds?: readonly number[]): string[][];
}

/** Where a message payload's id begins: it is the payload's second key, after its type. */
function idAt(payload: object, serialised: string): number {
  const head = JSON.stringify({ type: (payload as { type?: unknown }).type, id: 0 }).slice(0, -1);
  if (!serialised.startsWith(head)) throw new Error('a payload whose id the statement fills must begin with its type and id 0');
  return head.length;
}

/** The payload with its message's id in place of the 0 at `at` (from 1), as the statement writes it. */
const withId = (payload: string, at: number, id: number) => `${payload.slice(0, at - 1)}${id}${payload.slice(at)}`;

/**
 * The deliveries of `requests` as CTEs, for a statement that also writes what causes them (a
 * group commit of client messages writes its messages and their deliveries in one statement),
 * or for enqueueAll. Takes the chain locks the transaction does not hold yet first; null when
 * there is nothing to write. With `messages`, the name of the statement's CTE of its messages'
 * positions and ids (`n`, `id`), every request is a message's whose id the statement draws (`messageOf`).
 */
export async function deliveriesCte(
  tx: Transaction,
  requests: readonly DeliveryRequest[],
  messages: string | null = null,
): Promise<DeliveriesCte | null> {
  const rows: DeliveryRow[] = [];
  const chains = new Map<string, [number, number]>();
  if (requests.some((request) => (request.messageOf !== undefined) !== (messages !== null))) {
    throw new Error('with a CTE of messages every request is a message of it, and without one none is');
  }
  const planned = requests.map((request) => {
    const payload = JSON.stringify(request.payload);
    const message = request.messageOf === undefined ? {} : { message_n: request.messageOf, id_at: idAt(request.payload, payload) };
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
        const row: DeliveryRow = {
          id: randomUUID(),
          service_id: serviceId,
          ordering_key: key,
          kind: request.kind,
          payload: standbyIds.has(serviceId) ? standbyPayload : payload,
          first,
          n: rows.length,
          ...message,
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
    await prepared(tx, lockChainsSql(locks));
    tx.chainsLocked(locks);
  }
  // A ready row to an enabled Service is leased to this node's worker when it has room (handoff.ts).
  const room = handoffLease(tx.handoffTarget(), 'r.ready and r.enabled', 'r.service_id', 'r.n');
  const cte = deliveriesCteSql(rows, room, messages);
  /** The payload as written: the one serialised here, with its message's id where the statement put it. */
  const payloadOf = (row: DeliveryRow | undefined, messageIds: readonly number[]) => {
    if (!row) return '';
    if (row.message_n === undefined || row.id_at === undefined) return row.payload;
    const id = messageIds[row.message_n];
    if (id === undefined) throw new Error('a delivery of a message written without its id');
    return withId(row.payload, row.id_at, id);
  };
  return {
    cte,
    written: (inserted, messageIds = []) => {
      if (inserted.length === 0) return planned.map(() => []);
      tx.handOff(
        // The payload is not read back: it is the one serialised here.
        inserted.flatMap(({ ready, leased, n, ...row }) =>
          leased ? [{ ...row, payload: payloadOf(rows[n], messageIds), deviceId: null, attempts: 1 }] : [],
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
  const devices = await prepared<PushDevicesRow>(tx, pushDevicesSql(userIds));
  const rows = requests
    .flatMap((request, n) =>
      devices
        .filter((device) => device.userId === request.userId)
        .map((device) => ({ id: randomUUID(), device_id: device.id, kind: request.kind, payload: JSON.stringify(request.payload), n })),
    )
    .map((row, i) => ({ ...row, i }));
  if (rows.length === 0) return requests.map(() => []);
  // Only the first of a device's chain can be ready, and only if nothing of it is pending.
  await prepared(tx, insertPushesSql(rows), { commit });
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
    await prepared(tx, lockUserChainsSql(locks.map(([, key]) => key)));
    tx.chainsLocked(locks);
  }
  const written = await prepared<InsertEmailsRow>(tx, insertEmailsSql(notBeforeSeconds, rows), { commit });
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
    await prepared(tx, lockUserChainsSql([key]));
    tx.chainsLocked([[0, key]]);
  }
  const id = randomUUID();
  const payload = JSON.stringify({ userId: request.userId, transcriptThrough: request.throughMessageId });
  await prepared(tx, insertTranscriptSql({ id, userId: request.userId, key, payload }));
  tx.markDue();
  return id;
}
