// The embedded database's vacuum. PGlite runs no autovacuum: without it, the old versions of
// rows that every message updates stay in their tables and indexes for good. A delivery leaves
// the partial indexes of pending deliveries when it is sent, but its old entries do not, so each
// claim and each check of a user's chain walks past every delivery sent before; in the pipeline
// benchmark a round trip's latency grew with the number of round trips run before it. PostgreSQL
// servers vacuum by themselves; this runs only on the embedded database.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.ts';
import { Sweeper } from '../sweeper.ts';

/** The tables whose rows the message path updates (deliveries: leased, sent; a conversation's state; its user). */
export const VACUUMED_TABLES = ['deliveries', 'conversation_states', 'users'] as const;

/**
 * How often: a pass holds the one connection while it runs, and finds little to do this often
 * (pages unchanged since the last are skipped).
 */
const INTERVAL_SECONDS = 5;

export class EmbeddedVacuum extends Sweeper {
  constructor(em: () => EntityManager, logger: Logger) {
    super(
      async () => {
        // Not in a transaction (VACUUM refuses one); ANALYZE keeps the planner's figures current too.
        await em()
          .getConnection()
          .execute(`vacuum (analyze) ${VACUUMED_TABLES.join(', ')}`);
        return 0;
      },
      INTERVAL_SECONDS,
      logger,
      { swept: 'embedded database vacuumed', failed: 'vacuuming the embedded database failed' },
    );
  }
}
