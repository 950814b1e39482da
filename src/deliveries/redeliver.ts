// What an operator (or a Service, for its own deliveries) asks of deliveries: a dead one sent
// again, or the ones waiting for a retry made due now.
import type { EntityManager } from '@mikro-orm/postgresql';
import { named } from '../db/named.ts';
import { unleased, UNLEASED } from './lease.ts';
import { LOG_COLUMNS, type DeliveryLogEntry } from './listings.ts';

/**
 * Makes the Service's deliveries that wait for a later attempt due now: each is the head of
 * its conversation's chain (what comes after it waits for it) and not being sent. After the
 * Service's outage its conversations need not wait out the retry schedule (5 min, then 30 min,
 * and so on); the attempts count on, so a failure goes on down the schedule. Returns how many.
 */
export async function retryWaiting(em: EntityManager, serviceId: number): Promise<number> {
  const { sql, params } = named(
    `update deliveries d set next_attempt_at = now(), updated_at = now()
      where d.service_id = :serviceId and d.state = 'pending' and d.ready and d.next_attempt_at > now() and ${unleased('d')}
      returning d.id`,
    { serviceId },
  );
  const rows = await em.getConnection().execute<Array<{ id: string }>>(sql, params, 'all', em.getTransactionContext());
  return rows.length;
}

/**
 * Puts a dead delivery back with fresh attempts; null when it is not dead (any more). It is
 * sent at once, as its own head: the operator asked for it, and what came after it in its
 * chain has already gone on without it.
 */
export async function redeliver(em: EntityManager, id: string): Promise<DeliveryLogEntry | null> {
  const { sql, params } = named(
    `update deliveries set state = 'pending', ready = true, attempts = 0, next_attempt_at = now(), last_error = null,
            ${UNLEASED}, updated_at = now()
      where id = :id and state = 'dead'
      returning ${LOG_COLUMNS}`,
    { id },
  );
  const rows = await em.getConnection().execute<DeliveryLogEntry[]>(sql, params, 'all', em.getTransactionContext());
  return rows[0] ?? null;
}
