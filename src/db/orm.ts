// Opens the database: the PostgreSQL server named by DATABASE_URL, or the embedded one.
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './embedded.ts';
import { entities } from './entities/index.ts';
import { migrationsList } from './migrations/index.ts';

export interface Database {
  orm: MikroORM;
  /** True when the database is the embedded PGlite (one connection, no parallel sessions). */
  embedded: boolean;
  close(): Promise<void>;
}

export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'>,
  logger: Logger,
): Promise<Database> {
  let embedded: EmbeddedDatabase | undefined;
  if (!config.databaseUrl) {
    embedded = await startEmbeddedDatabase(config.dataDir);
    logger.info({ dataDir: config.dataDir }, 'embedded database started');
  }
  const url = config.databaseUrl ?? embedded?.url;
  try {
    const orm = await MikroORM.init({
      clientUrl: url,
      entities,
      extensions: [Migrator],
      migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false },
      discovery: { warnWhenNoEntities: false },
      // The embedded server takes one connection (see embedded-worker.ts).
      pool: embedded ? { min: 1, max: 1 } : { min: 0, max: 10 },
      allowGlobalContext: false,
      debug: false,
      logger: (message) => logger.debug({ orm: true }, message),
    });
    return {
      orm,
      embedded: embedded !== undefined,
      async close() {
        await orm.close(true);
        await embedded?.stop();
      },
    };
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
}

export async function migrate(db: Database, logger: Logger): Promise<void> {
  const applied = await db.orm.getMigrator().up();
  if (applied.length > 0) logger.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
}
