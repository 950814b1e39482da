// The numbers of a Service's deliveries for the dashboard: how many are in each state, and
// the last hour minute by minute, from the attempts log: a minute's "delivered" are the
// attempts made in it that delivered, its "failed" those that did not (to be retried or not).
import type { EntityManager } from '@mikro-orm/postgresql';

export interface DeliveryStats {
  pending: number;
  dead: number;
  delivered: number;
  /** The 60 whole minutes up to and including the current one, oldest first. */
  lastHour: Array<{ minute: Date; delivered: number; failed: number }>;
}

export async function deliveryStats(em: EntityManager, serviceId: number): Promise<DeliveryStats> {
  const connection = em.getConnection();
  const [counts] = await connection.execute<Array<{ pending: string; dead: string; delivered: string }>>(
    `select count(*) filter (where state = 'pending') as pending,
            count(*) filter (where state = 'dead') as dead,
            count(*) filter (where state = 'delivered') as delivered
       from deliveries where service_id = ?`,
    [serviceId],
  );
  const minutes = await connection.execute<Array<{ minute: Date; delivered: string; failed: string }>>(
    `with made as (
       select outcome, started_at from delivery_attempts
        where service_id = ? and started_at >= date_trunc('minute', now()) - interval '59 minutes'
     )
     select m.minute,
            count(a.started_at) filter (where a.outcome = 'delivered') as delivered,
            count(a.started_at) filter (where a.outcome <> 'delivered') as failed
       from generate_series(date_trunc('minute', now()) - interval '59 minutes', date_trunc('minute', now()), interval '1 minute') as m(minute)
       left join made a on a.started_at >= m.minute and a.started_at < m.minute + interval '1 minute'
      group by m.minute
      order by m.minute`,
    [serviceId],
  );
  return {
    pending: Number(counts?.pending ?? 0),
    dead: Number(counts?.dead ?? 0),
    delivered: Number(counts?.delivered ?? 0),
    lastHour: minutes.map((m) => ({ minute: new Date(m.minute), delivered: Number(m.delivered), failed: Number(m.failed) })),
  };
}
