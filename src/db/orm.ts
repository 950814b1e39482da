// Opens the database: the PostgreSQL server named by DATABASE_URL, or the embedded one.
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import pg from 'pg';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase, type EmbeddedReadings } from './embedded.ts';
import { PipelinedDialect } from './pipelined.ts';
import { entities } from './entities/index.ts';
import { migrationsList } from './migrations/index.ts';

export interface Database {
  orm: MikroORM;
  url: string;
  /** True when the database is the embedded PGlite (one connection, no parallel sessions). */
  embedded: boolean;
  /** The embedded database thread's readings (its busy time and V8 heap) for the metrics; null on PostgreSQL. */
  embeddedReadings: EmbeddedReadings | null;
  close(): Promise<void>;
}

/** DATABASE_URL could not be reached at start, for as long as `databaseRetrySeconds` allows. */
export class DatabaseUnreachableError extends Error {
  constructor(shownUrl: string, reason: string, seconds: number) {
    super(
      `DATABASE_URL (${shownUrl}) cannot be reached: ${reason}` +
        `${seconds > 0 ? ` (tried for ${seconds} s)` : ''}. Is PostgreSQL running there, and is the URL right?`,
    );
    this.name = 'DatabaseUnreachableError';
  }
}

/** The URL without its password, for logs. */
function shown(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.username ? `${u.username}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return 'an unreadable URL';
  }
}

/** Refused credentials (class 28) or a database that does not exist (3D000) do not get better by waiting. */
function worthRetrying(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return !(typeof code === 'string' && (code.startsWith('28') || code === '3D000'));
}

const RETRY_PAUSE_MS = 2000;

/**
 * Waits for the PostgreSQL server of DATABASE_URL: started beside Palaver (docker compose, a
 * system service), it may take a few seconds to accept connections. One warning per attempt.
 */
async function waitForDatabase(url: string, retrySeconds: number, logger: Logger): Promise<void> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      const reason = err instanceof Error ? err.message : String(err);
      const left = retrySeconds * 1000 - (Date.now() - started);
      if (!worthRetrying(err) || left < RETRY_PAUSE_MS) {
        throw new DatabaseUnreachableError(shown(url), reason, Math.round((Date.now() - started) / 1000));
      }
      logger.warn(
        { attempt, error: reason },
        `DATABASE_URL (${shown(url)}) cannot be reached (${reason}); trying again in ${RETRY_PAUSE_MS / 1000} s, for ${Math.ceil(left / 1000)} s more`,
      );
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    }
  }
}

export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'databaseRetrySeconds'>>,
  logger: Logger,
): Promise<Database> {
  let embedded: EmbeddedDatabase | undefined;
  if (config.databaseUrl) {
    logger.info(`connecting to the database of DATABASE_URL (${shown(config.databaseUrl)})`);
    await waitForDatabase(config.databaseUrl, config.databaseRetrySeconds ?? 0, logger);
  } else {
    // A first start creates the database (several seconds) and nothing else would be printed meanwhile.
    logger.info({ dataDir: config.dataDir }, `starting the embedded database in ${config.dataDir}`);
    embedded = await startEmbeddedDatabase(config.dataDir);
    logger.info({ dataDir: config.dataDir }, 'embedded database started');
  }
  const url = config.databaseUrl ?? embedded?.url ?? '';
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
      driverOptions: {
        // Connections in pg's pipeline mode, BEGIN and COMMIT queued with statements (pipelined.ts).
        client: PipelinedDialect,
        // knex's own lines (a pooled pg connection that failed or ended: "Connection Error: …")
        // go through the logger instead of console.log.
        log: knexLog(logger),
      },
    });
    return {
      orm,
      url,
      embedded: embedded !== undefined,
      embeddedReadings: embedded ?? null,
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

/** knex's logger hooks (its Logger calls console.log unless given these). */
function knexLog(logger: Logger): Record<'debug' | 'warn' | 'error' | 'deprecate', (message: unknown) => void> {
  const line = (message: unknown) => (typeof message === 'string' ? message : JSON.stringify(message));
  return {
    debug: (message) => logger.debug({ db: 'knex' }, line(message)),
    warn: (message) => logger.warn({ db: 'knex' }, line(message)),
    error: (message) => logger.error({ db: 'knex' }, line(message)),
    deprecate: (message) => logger.debug({ db: 'knex' }, line(message)),
  };
}

// Any fixed number; it names "Palaver migrations" among the advisory locks of the database.
const MIGRATION_LOCK = 7_301_990;

/**
 * Applies pending migrations. Nodes starting together on one PostgreSQL take turns through
 * an advisory lock, held on a connection of its own so the migrator's transaction is not
 * inside it. The embedded database belongs to one process and takes one connection, so no lock.
 */
export async function migrate(db: Database, logger: Logger): Promise<void> {
  const lock = db.embedded ? undefined : new pg.Client({ connectionString: db.url });
  // A session lost while it waits: logged; the query in flight fails on its own. Unhandled, the
  // 'error' event would end the process.
  lock?.on('error', (err) => logger.warn({ err }, 'database: migration lock connection failed'));
  try {
    await lock?.connect();
    await lock?.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const applied = await db.orm.getMigrator().up();
    if (applied.length > 0) logger.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
  } finally {
    // Ending the session releases the lock.
    await lock?.end();
  }
}
