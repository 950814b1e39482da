// The one place that writes deliveries. Whoever causes a payload hands it here inside the
// transaction of the change, so the outbox rows commit with the change or not at all.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DeliveryKind } from '../db/entities/index.ts';

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
  const unique = [...new Set(request.recipients)];
  if (unique.length === 0) return [];
  const body = JSON.stringify(request.payload);
  const rows = await em
    .getConnection()
    .execute<Array<{ id: string }>>(
      `insert into deliveries (id, service_id, ordering_key, kind, payload, next_attempt_at)
       select gen_random_uuid(), s.id, ?, ?, ?, now()
       from services s
       where s.id = any(?::int[]) and s.webhook_url is not null
       order by array_position(?::int[], s.id)
       returning id`,
      [request.orderingKey, request.kind, body, pgIntArray(unique), pgIntArray(unique)],
      'all',
      em.getTransactionContext(),
    );
  if (rows.length > 0) enqueuedIn.add(em);
  return rows.map((r) => r.id);
}

/** A PostgreSQL array literal; knex would expand a JS array into a list of parameters. */
export function pgIntArray(values: readonly number[]): string {
  return `{${values.map((v) => Math.trunc(v)).join(',')}}`;
}
