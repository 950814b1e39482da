// Autovacuum's work on the embedded database. PGlite runs PostgreSQL in single-user mode, where
// no autovacuum ever runs: every update and delete left its old row version behind for good
// (deliveries are updated at every attempt, conversation states at every message), the pending
// deliveries' indexes kept pointing at versions long dead, and the planner's statistics stayed
// those of the empty tables the migrations made. PostgreSQL's own statistics are kept there
// (pg_stat_user_tables), so a sweep applies autovacuum's default rules to them: a table whose
// dead rows pass 50 + 20% of its live ones is vacuumed and analysed, one whose changes since
// its last analysis pass 50 + 10% is analysed. One statement a table, so that the one
// connection goes back to the node's work between two.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.ts';
import { Sweeper } from '../sweeper.ts';

interface DueTable {
  relname: string;
  vacuum: boolean;
}

/** One pass: the tables past autovacuum's thresholds vacuumed or analysed; how many. */
export async function vacuumEmbedded(em: EntityManager): Promise<number> {
  const connection = em.getConnection();
  const due = await connection.execute<DueTable[]>(
    `select relname, n_dead_tup > 50 + 0.2 * n_live_tup as vacuum
       from pg_stat_user_tables
      where schemaname = 'public'
        and (n_dead_tup > 50 + 0.2 * n_live_tup or n_mod_since_analyze > 50 + 0.1 * n_live_tup)
      order by n_dead_tup desc`,
  );
  for (const { relname, vacuum } of due) {
    const table = `"${relname.replaceAll('"', '""')}"`;
    await connection.execute(vacuum ? `vacuum (analyze) ${table}` : `analyze ${table}`);
  }
  return due.length;
}

/** The embedded database's vacuum sweep of one node (started only on the embedded database). */
export class EmbeddedVacuum extends Sweeper {
  constructor(em: () => EntityManager, intervalSeconds: number, logger: Logger) {
    super(() => vacuumEmbedded(em()), intervalSeconds, logger, {
      swept: 'embedded database: tables vacuumed or analysed',
      failed: 'embedded database: vacuum failed',
    });
  }
}
