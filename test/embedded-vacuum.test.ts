// The embedded database (PGlite: PostgreSQL in single-user mode) runs no autovacuum: Palaver's
// sweep does its work (db/embedded-vacuum.ts). Embedded mode only: on a PostgreSQL server its
// own autovacuum does it, and the sweep is not started.
import { expect } from 'chai';
import type { EntityManager } from '@mikro-orm/postgresql';
import { vacuumEmbedded } from '../src/db/embedded-vacuum.ts';
import { mode } from './support/database.ts';
import { startTestServer, type TestServer } from './support/server.ts';

interface TableStats {
  n_dead_tup: string;
  last_vacuum: Date | null;
}

async function stats(em: EntityManager, table: string): Promise<TableStats> {
  const [row] = await em
    .getConnection()
    .execute<TableStats[]>('select n_dead_tup, last_vacuum from pg_stat_user_tables where relname = ?', [table]);
  if (!row) throw new Error(`no statistics for ${table}`);
  return row;
}

/** Old row versions left behind: the rows of a table made for the test, each written again. */
async function churn(em: EntityManager): Promise<void> {
  const connection = em.getConnection();
  await connection.execute('create table vacuum_probe (id integer primary key, n integer not null)');
  await connection.execute('insert into vacuum_probe select g, 0 from generate_series(1, 2000) g');
  await connection.execute('update vacuum_probe set n = n + 1');
  await connection.execute('update vacuum_probe set n = n + 1');
}

describe('the embedded database vacuumed by Palaver', function () {
  this.timeout(60_000);
  let server: TestServer;

  before(async function () {
    if (mode !== 'embedded') return this.skip();
    server = await startTestServer({ embeddedVacuumIntervalSeconds: 1 });
  });
  after(() => server?.stop());

  it('vacuums a table past autovacuum’s threshold on its timer, and a pass right after finds nothing due', async () => {
    const em = server.deps.db.orm.em;
    await churn(em);

    // The sweep's own timer (1 s here): the dead versions are gone and the table marked vacuumed.
    for (let waited = 0; (await stats(em, 'vacuum_probe')).last_vacuum === null; waited += 100) {
      if (waited > 20_000) throw new Error('the table was not vacuumed');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(Number((await stats(em, 'vacuum_probe')).n_dead_tup)).to.equal(0);
    expect(await vacuumEmbedded(em), 'nothing left due').to.equal(0);
  });
});
