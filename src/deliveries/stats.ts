// The numbers of a Service's deliveries for the dashboard: how many are in each state, and
// the last hour minute by minute. Read from the deliveries table itself: there is no log of
// single attempts, so a minute's "failed" are the deliveries that ended dead in it (a failed
// attempt that is retried later counts only once it gives up).
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
  // A dead row is not written again once ended (redelivery makes it pending), so its
  // updated_at is when it died.
  const minutes = await connection.execute<Array<{ minute: Date; delivered: string; failed: string }>>(
    `with ended as (
       select state, coalesce(delivered_at, updated_at) as at from deliveries
        where service_id = ? and state in ('delivered', 'dead')
          and coalesce(delivered_at, updated_at) >= date_trunc('minute', now()) - interval '59 minutes'
     )
     select m.minute,
            count(e.at) filter (where e.state = 'delivered') as delivered,
            count(e.at) filter (where e.state = 'dead') as failed
       from generate_series(date_trunc('minute', now()) - interval '59 minutes', date_trunc('minute', now()), interval '1 minute') as m(minute)
       left join ended e on e.at >= m.minute and e.at < m.minute + interval '1 minute'
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
