// The one place that writes deliveries. Whoever causes a payload hands it here inside the
// transaction of the change, so the outbox rows commit with the change or not at all.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DeliveryKind } from '../db/entities/index.ts';
import { pgIntArray } from '../db/pg-arrays.ts';

export interface DeliveryRequest {
  kind: DeliveryKind;
  /** Serialised once, here: every attempt sends and signs exactly these bytes. */
  payload: object;
  /** Service ids. Services without a webhook URL receive nothing. */
  recipients: number[];
  /** Deliveries with the same key to the same Service arrive in the order they were enqueued. */
  orderingKey: number | null;
}

export class OutboxError extends Error {}

/** Transactions that enqueued something; the worker is told when they commit (see worker.ts). */
const enqueuedIn = new WeakSet<object>();

export function hasEnqueued(em: object): boolean {
  return enqueuedIn.has(em);
}

/** Adds the payload's deliveries to the caller's transaction; returns their ids (the `webhook-id`s). */
export async function enqueue(em: EntityManager, request: DeliveryRequest): Promise<string[]> {
  if (!em.isInTransaction()) {
    // A delivery written outside the change's transaction could outlive a rolled-back change.
    throw new OutboxError('deliveries must be enqueued inside the transaction of the change that causes them');
  }
  // Sorted, so transactions that lock several chains take the locks in one global order.
  const recipients = [...new Set(request.recipients)].sort((a, b) => a - b);
  if (recipients.length === 0) return [];
  const connection = em.getConnection();
  const trx: unknown = em.getTransactionContext();
  if (request.orderingKey !== null) {
    // The chain lock (also taken when a delivery of the chain completes) makes "is there an
    // earlier pending delivery?" and the promotion of the next one exclude each other.
    await connection.execute(
      `select pg_advisory_xact_lock(id, ?) from services where id = any(?::int[]) order by id`,
      [request.orderingKey, pgIntArray(recipients)],
      'all',
      trx,
    );
  }
  const rows = await connection.execute<Array<{ id: string }>>(
    `insert into deliveries (id, service_id, ordering_key, kind, payload, ready)
     select gen_random_uuid(), s.id, ?::int, ?, ?,
            ?::int is null or not exists (
              select 1 from deliveries e
              where e.service_id = s.id and e.ordering_key = ?::int and e.state = 'pending')
     from services s
     where s.id = any(?::int[]) and s.webhook_url is not null
     order by s.id
     returning id`,
    [request.orderingKey, request.kind, JSON.stringify(request.payload), request.orderingKey, request.orderingKey, pgIntArray(recipients)],
    'all',
    trx,
  );
  if (rows.length > 0) enqueuedIn.add(em);
  return rows.map((r) => r.id);
}
