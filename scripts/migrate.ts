// `npm run migrate`: applies pending migrations to the configured database and exits.
import { loadConfig } from '../src/config.ts';
import { migrate, openDatabase } from '../src/db/orm.ts';
import { createLogger } from '../src/logger.ts';

const config = loadConfig();
const logger = createLogger(config, 2);
const db = await openDatabase(config, logger);
try {
  await migrate(db, logger);
} finally {
  await db.close();
}
