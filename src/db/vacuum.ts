// Autovacuum's work where the database does not do it: always on the embedded database (PGlite
// runs PostgreSQL in single-user mode, where no autovacuum ever runs), and on a PostgreSQL
// server whose `autovacuum` is off. Without it every update and delete leaves its old row
// version behind for good (deliveries are updated at every attempt, conversation states at
// every message), and the planner keeps the statistics of the empty tables the migrations made.
// The second costs more than the first: the hot statements are prepared (prepared.ts), and a
// generic plan made while a table was small scans it whole at every call until an analysis
// invalidates the plan. On a PostgreSQL server without autovacuum, one outcome's chain lock
// read the whole deliveries table, 708 pages at 3,000 conversations (docs/performance.md).
// PostgreSQL's statistics are kept in both cases (pg_stat_user_tables), so a sweep applies
// autovacuum's default rules to them. A table is vacuumed and analysed when
// - its dead rows pass 50 + 20% of its live ones (updates and deletes);
// - its inserts since its last vacuum pass 1,000 + 20% of its live rows (PostgreSQL 13's rule
//   for insert-only tables: messages are never updated, and only a vacuum marks their pages
//   all-visible and moves the full-text index's pending entries into the index proper);
// - its oldest unfrozen transaction id or multixact is older than autovacuum's freeze limits
//   (200 and 400 million by default). A table no other rule ever makes due would otherwise keep
//   its first rows unfrozen until PostgreSQL stops taking writes to save itself from transaction
//   id wraparound; at 100 transactions a second the embedded database reaches the first limit
//   in 23 days. Past vacuum_freeze_table_age, lower than that limit, a plain VACUUM freezes.
// One whose changes since its last analysis pass 50 + 10% of its live rows is analysed.
// One statement a table, so that the embedded database's one connection goes back to the
// node's work between two; SKIP_LOCKED, so that two nodes sweeping at once do not queue on
// each other's tables.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.ts';
import { Sweeper } from '../sweeper.ts';

interface DueTable {
  relname: string;
  vacuum: boolean;
}

/**
 * Transaction ages past which a table is vacuumed whatever its counts say; by default the
 * database's own autovacuum_freeze_max_age and autovacuum_multixact_freeze_max_age (a test
 * passes lower ones: reaching the defaults takes hundreds of millions of transactions).
 */
export interface FreezeLimits {
  transactions?: number;
  multixacts?: number;
}

/** One pass: the tables past autovacuum's thresholds vacuumed or analysed; how many. */
export async function vacuumDueTables(em: EntityManager, freeze: FreezeLimits = {}): Promise<number> {
  const connection = em.getConnection();
  const due = await connection.execute<DueTable[]>(
    `select relname, vacuum
       from (select s.relname, s.n_mod_since_analyze, s.n_live_tup,
                    s.n_dead_tup > 50 + 0.2 * s.n_live_tup
                    or s.n_ins_since_vacuum > 1000 + 0.2 * s.n_live_tup
                    or greatest(age(c.relfrozenxid), age(t.relfrozenxid))
                       > coalesce(?::bigint, current_setting('autovacuum_freeze_max_age')::bigint)
                    or greatest(mxid_age(c.relminmxid), mxid_age(t.relminmxid))
                       > coalesce(?::bigint, current_setting('autovacuum_multixact_freeze_max_age')::bigint)
                      as vacuum,
                    s.n_dead_tup
               from pg_stat_user_tables s
               join pg_class c on c.oid = s.relid
               left join pg_class t on t.oid = c.reltoastrelid
              where s.schemaname = 'public') tables
      where vacuum or n_mod_since_analyze > 50 + 0.1 * n_live_tup
      order by n_dead_tup desc`,
    [freeze.transactions ?? null, freeze.multixacts ?? null],
  );
  for (const { relname, vacuum } of due) {
    const table = `"${relname.replaceAll('"', '""')}"`;
    await connection.execute(vacuum ? `vacuum (analyze, skip_locked) ${table}` : `analyze (skip_locked) ${table}`);
  }
  return due.length;
}

export type VacuumedBy = 'database' | 'palaver' | 'nobody';

/**
 * Who keeps the tables vacuumed and analysed: the database's autovacuum, Palaver's sweep (the
 * embedded database; autovacuum off), or nobody (`track_counts` off: neither can tell what is
 * due).
 */
export async function vacuumedBy(em: EntityManager, embedded: boolean): Promise<VacuumedBy> {
  const [settings] = await em
    .getConnection()
    .execute<Array<{ autovacuum: string; track_counts: string }>>(
      `select current_setting('autovacuum') as autovacuum, current_setting('track_counts') as track_counts`,
    );
  if (settings?.track_counts !== 'on') return 'nobody';
  return embedded || settings.autovacuum !== 'on' ? 'palaver' : 'database';
}

/** A node's vacuum sweep (started only where the database has no autovacuum). */
export class TableVacuum extends Sweeper {
  constructor(em: () => EntityManager, intervalSeconds: number, logger: Logger) {
    super(() => vacuumDueTables(em()), intervalSeconds, logger, {
      swept: 'tables vacuumed or analysed',
      failed: 'vacuum failed',
    });
  }
}
