// Writes straight into a test database from the test process, through the same domain and
// outbox code the server uses: for setting up work before a server process starts.
import type { EntityManager } from '@mikro-orm/postgresql';
import { createLogger } from '../../src/logger.ts';
import { migrate, openDatabase } from '../../src/db/orm.ts';
import type { TestDatabase } from './database.ts';

export async function withDatabase<T>(database: TestDatabase, work: (em: EntityManager) => Promise<T>): Promise<T> {
  const logger = createLogger({ logLevel: 'warn' });
  const db = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir }, logger);
  try {
    await migrate(db, logger);
    return await work(db.orm.em.fork());
  } finally {
    await db.close();
  }
}
