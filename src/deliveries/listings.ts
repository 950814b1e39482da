// The delivery log an operator reads (Admin API, dashboard): deliveries in pages, one
// delivery, its attempts, and how many are pending (the health check).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DeliveryKind, DeliveryState } from '../db/entities/index.ts';
import { named } from '../db/named.ts';
import type { OutcomeRecord } from './outcomes.ts';

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

export const LOG_COLUMNS = `id, service_id as "serviceId", device_id as "deviceId", user_id as "userId", kind, state, ready, attempts, next_attempt_at as "nextAttemptAt",
  last_status as "lastStatus", last_error as "lastError", payload, created_at as "createdAt",
  delivered_at as "deliveredAt", seq`;

export interface DeliveryAttempt {
  attempt: number;
  startedAt: Date;
  durationMs: number;
  status: number | null;
  error: string | null;
  outcome: OutcomeRecord['type'];
  nextAttemptAt: Date | null;
}

interface Page {
  state?: DeliveryState | undefined;
  limit: number;
  /** The `seq` of the last row of the previous page. */
  beforeSeq?: number | undefined;
}

/** A page of the deliveries `where` selects (SQL with named values), newest first. */
async function page(em: EntityManager, where: string, values: Record<string, unknown>, query: Page): Promise<DeliveryLogEntry[]> {
  const { sql, params } = named(
    `select ${LOG_COLUMNS} from deliveries
      where ${where} and (:state::text is null or state = :state) and (:beforeSeq::bigint is null or seq < :beforeSeq)
      order by seq desc limit :limit`,
    { ...values, state: query.state ?? null, beforeSeq: query.beforeSeq ?? null, limit: query.limit },
  );
  return em.getConnection().execute<DeliveryLogEntry[]>(sql, params);
}

/**
 * Newest first, in pages: `beforeSeq` is the `seq` of the last row of the previous page. Also
 * by creation time (`since` included, `until` not) and by user (the chain's ordering key).
 */
export async function listDeliveries(
  em: EntityManager,
  query: Page & { serviceId: number; since?: string | undefined; until?: string | undefined; userId?: number | undefined },
): Promise<DeliveryLogEntry[]> {
  return page(
    em,
    `service_id = :serviceId
        and (:since::timestamptz is null or created_at >= :since::timestamptz)
        and (:until::timestamptz is null or created_at < :until::timestamptz)
        and (:userId::int is null or ordering_key = :userId)`,
    { serviceId: query.serviceId, since: query.since ?? null, until: query.until ?? null, userId: query.userId ?? null },
    query,
  );
}

/** The pushes to an account's devices, newest first, in pages as listDeliveries. */
export async function listPushDeliveries(em: EntityManager, query: Page & { accountId: number }): Promise<DeliveryLogEntry[]> {
  return page(em, 'device_id in (select id from devices where account_id = :accountId)', { accountId: query.accountId }, query);
}

/** The emails to an account's users (answers by email), newest first, in pages as listDeliveries. */
export async function listEmailDeliveries(em: EntityManager, query: Page & { accountId: number }): Promise<DeliveryLogEntry[]> {
  return page(em, 'user_id in (select id from users where account_id = :accountId)', { accountId: query.accountId }, query);
}

export async function findDelivery(em: EntityManager, id: string): Promise<DeliveryLogEntry | null> {
  const { sql, params } = named(`select ${LOG_COLUMNS} from deliveries where id = :id`, { id });
  const rows = await em.getConnection().execute<DeliveryLogEntry[]>(sql, params);
  return rows[0] ?? null;
}

/** A delivery's attempts in the order they were made. */
export async function listAttempts(em: EntityManager, deliveryId: string): Promise<DeliveryAttempt[]> {
  const { sql, params } = named(
    `select attempt, started_at as "startedAt", duration_ms as "durationMs", status, error, outcome, next_attempt_at as "nextAttemptAt"
       from delivery_attempts where delivery_id = :deliveryId order by id`,
    { deliveryId },
  );
  return em.getConnection().execute<DeliveryAttempt[]>(sql, params);
}

export async function countPending(em: EntityManager): Promise<number> {
  const [row] = await em
    .getConnection()
    .execute<Array<{ count: string }>>(`select count(*) as count from deliveries where state = 'pending'`);
  return Number(row?.count ?? 0);
}
