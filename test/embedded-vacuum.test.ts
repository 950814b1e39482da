import { expect } from 'chai';
import { EmbeddedVacuum, VACUUMED_TABLES } from '../src/db/vacuum.ts';
import { sharedServer } from './support/server.ts';

describe('Embedded database vacuum', () => {
  /** Each table's vacuums so far, as PostgreSQL (and PGlite) count them. */
  async function vacuumCounts(): Promise<Record<string, number>> {
    const rows = await sharedServer()
      .deps.db.orm.em.fork()
      .getConnection()
      .execute<Array<{ relname: string; vacuum_count: string }>>(
        `select relname, vacuum_count from pg_stat_user_tables where relname = any(?::text[])`,
        [`{${VACUUMED_TABLES.join(',')}}`],
      );
    return Object.fromEntries(rows.map((row) => [row.relname, Number(row.vacuum_count)]));
  }

  it('vacuums the tables the message path updates in one pass', async () => {
    const { deps } = sharedServer();
    const before = await vacuumCounts();
    const vacuum = new EmbeddedVacuum(() => deps.db.orm.em.fork(), deps.logger);
    expect(await vacuum.sweep()).to.equal(0);
    const after = await vacuumCounts();
    for (const table of VACUUMED_TABLES) expect(after[table], table).to.equal((before[table] ?? 0) + 1);
  });
});
