// Which account a delivery belongs to: a webhook's through its Service, a push through the
// device, an email through the user. The Admin API checks permissions on that account.
import type { EntityManager } from '@mikro-orm/postgresql';
import { DeviceSchema, ServiceSchema, UserSchema } from '../db/entities/index.ts';
import type { DeliveryLogEntry } from './listings.ts';

export async function deliveryAccountId(em: EntityManager, delivery: DeliveryLogEntry): Promise<number | null> {
  const owner =
    delivery.serviceId !== null
      ? await em.findOne(ServiceSchema, { id: delivery.serviceId })
      : delivery.deviceId !== null
        ? await em.findOne(DeviceSchema, { id: delivery.deviceId })
        : await em.findOne(UserSchema, { id: delivery.userId ?? 0 });
  return owner?.accountId ?? null;
}
