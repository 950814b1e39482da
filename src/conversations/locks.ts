// Transaction-scoped advisory locks on names. Hashed into PostgreSQL's single 64-bit key
// space, apart from the (service, user) pairs the outbox locks in the two-key space.
import type { EntityManager } from '@mikro-orm/postgresql';

/** Held until the transaction ends. Take several in a fixed order (device before user). */
export async function lockName(em: EntityManager, name: string): Promise<void> {
  await em.getConnection().execute(`select pg_advisory_xact_lock(hashtextextended(?, 0))`, [name], 'all', em.getTransactionContext());
}

export const deviceLock = (accountId: number, deviceId: string) => `device:${accountId}:${deviceId}`;
export const customerLock = (accountId: number, uniqueIdentifier: string) => `customer:${accountId}:${uniqueIdentifier}`;
