// Where the database runs no autovacuum, Palaver's sweep does its work (db/vacuum.ts): always on
// the embedded database (PGlite is PostgreSQL in single-user mode), and on a PostgreSQL server
// whose autovacuum is off. A server with autovacuum on keeps it, and the node starts no sweep.
import { expect } from 'chai';
import type { EntityManager } from '@mikro-orm/postgresql';
import { vacuumDueTables } from '../src/db/vacuum.ts';
import { mode } from './support/database.ts';
import { startTestServer, type TestServer } from './support/server.ts';

interface TableStats {
  n_dead_tup: string;
  n_ins_since_vacuum: string;
  last_vacuum: Date | null;
  last_analyze: Date | null;
}

async function stats(em: EntityManager, table: string): Promise<TableStats> {
  const [row] = await em
    .getConnection()
    .execute<TableStats[]>('select n_dead_tup, n_ins_since_vacuum, last_vacuum, last_analyze from pg_stat_user_tables where relname = ?', [
      table,
    ]);
  if (!row) throw new Error(`no statistics for ${table}`);
  return row;
}

/** Reads a table's statistics until they show what a transaction just reported. */
async function until(em: EntityManager, table: string, shown: (stats: TableStats) => boolean, what: string): Promise<void> {
  for (let waited = 0; !shown(await stats(em, table)); waited += 50) {
    if (waited > 10_000) throw new Error(`${what} of ${table} were never counted`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Old row versions left behind: the rows of a table made for the test, each written again, in one
 * transaction that has its backend report its counts as it ends (PostgreSQL otherwise holds
 * them up to a second), and read back until pg_stat_user_tables shows them.
 */
async function churn(em: EntityManager, table: string): Promise<void> {
  await em.transactional(async (t) => {
    await t.execute(`create table ${table} (id integer primary key, n integer not null)`);
    await t.execute(`insert into ${table} select g, 0 from generate_series(1, 2000) g`);
    await t.execute(`update ${table} set n = n + 1`);
    await t.execute(`update ${table} set n = n + 1`);
    await t.execute('select pg_stat_force_next_flush()');
  });
  await until(em, table, (s) => Number(s.n_dead_tup) > 0, 'the dead rows');
}

/** A table made for the test with `rows` rows, none ever updated, counted once reported. */
async function inserted(em: EntityManager, table: string, rows: number): Promise<void> {
  await em.transactional(async (t) => {
    await t.execute(`create table ${table} (id integer primary key, body text not null)`);
    await t.execute(`insert into ${table} select g, 'message ' || g from generate_series(1, ${rows}) g`);
    await t.execute('select pg_stat_force_next_flush()');
  });
  await until(em, table, (s) => Number(s.n_ins_since_vacuum) >= rows, 'the inserts');
}

async function autovacuumOn(em: EntityManager): Promise<boolean> {
  const [row] = await em.getConnection().execute<Array<{ on: boolean }>>(`select current_setting('autovacuum') = 'on' as on`);
  return row?.on === true;
}

describe('tables vacuumed by Palaver where the database does not', function () {
  this.timeout(60_000);
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ vacuumIntervalSeconds: 1 });
  });
  after(() => server?.stop());

  it('sweeps on the embedded database, and on PostgreSQL exactly when its autovacuum is off', async () => {
    const em = server.deps.db.orm.em;
    const expected = mode === 'embedded' || !(await autovacuumOn(em)) ? 'palaver' : 'database';
    expect(server.vacuuming).to.equal(expected);
  });

  it('vacuums a table past autovacuum’s threshold on its timer, and a pass right after finds nothing due', async function () {
    if (server.vacuuming !== 'palaver') return this.skip();
    const em = server.deps.db.orm.em;
    await churn(em, 'vacuum_probe');

    // The sweep's own timer (1 s here): the dead versions are gone and the table marked vacuumed.
    for (let waited = 0; (await stats(em, 'vacuum_probe')).last_vacuum === null; waited += 100) {
      if (waited > 20_000) throw new Error('the table was not vacuumed');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const after = await stats(em, 'vacuum_probe');
    expect(Number(after.n_dead_tup)).to.equal(0);
    expect(after.last_analyze, 'analysed with it').to.not.equal(null);
    expect(await vacuumDueTables(em), 'nothing left due').to.equal(0);
  });

  it('a pass, wherever it runs, vacuums what is due and leaves the rest', async () => {
    // Called directly: on a PostgreSQL server with autovacuum on the node runs no sweep, but a
    // pass must still do the work, so that switching autovacuum off loses nothing.
    const em = server.deps.db.orm.em;
    await em.getConnection().execute('create table vacuum_probe_quiet (id integer primary key)');
    await churn(em, 'vacuum_probe_direct');
    // Where the node sweeps (embedded, or PostgreSQL without autovacuum) its own timer may be
    // vacuuming the table at this moment, on another connection, and this pass then skips it
    // (skip_locked): either way it is swept, once that vacuum has ended and reported.
    await vacuumDueTables(em);
    await until(em, 'vacuum_probe_direct', (s) => s.last_vacuum !== null, 'the vacuums');
    // A vacuum removes only the row versions no open snapshot can still see. On a shared
    // PostgreSQL server another session's snapshot (an autovacuum's ANALYZE, a test beside this
    // one) may predate the churn; the table then stays due, and a later pass removes them.
    for (let passes = 1; Number((await stats(em, 'vacuum_probe_direct')).n_dead_tup) > 0 && passes < 20; passes += 1) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      await vacuumDueTables(em);
    }
    const churned = await stats(em, 'vacuum_probe_direct');
    expect(Number(churned.n_dead_tup)).to.equal(0);
    expect(churned.last_vacuum).to.not.equal(null);
    expect((await stats(em, 'vacuum_probe_quiet')).last_vacuum, 'an empty table is not due').to.equal(null);
  });

  it('vacuums an insert-only table once its inserts pass 1,000 + 20% of its rows, and not before', async () => {
    // Messages are only ever inserted: no dead rows, yet a vacuum is what marks their pages
    // all-visible and empties the full-text index's pending list.
    const em = server.deps.db.orm.em;
    await inserted(em, 'vacuum_probe_few', 900);
    await inserted(em, 'vacuum_probe_many', 2_000);
    await vacuumDueTables(em);
    const many = await stats(em, 'vacuum_probe_many');
    expect(many.last_vacuum, 'past the insert threshold').to.not.equal(null);
    expect(Number(many.n_ins_since_vacuum)).to.equal(0);
    const few = await stats(em, 'vacuum_probe_few');
    expect(few.last_vacuum, 'under the insert threshold: analysed only').to.equal(null);
    expect(few.last_analyze).to.not.equal(null);
  });

  it('vacuums a table whose oldest transaction id is past the freeze limit, however little it changed', async () => {
    const em = server.deps.db.orm.em;
    await inserted(em, 'vacuum_probe_old', 10);
    // A few transactions later its relfrozenxid is a few transactions old: under any real limit,
    // over one of 1.
    for (let i = 0; i < 3; i += 1) await em.transactional((t) => t.execute('select txid_current()'));
    await vacuumDueTables(em);
    expect((await stats(em, 'vacuum_probe_old')).last_vacuum, 'under autovacuum_freeze_max_age').to.equal(null);
    await vacuumDueTables(em, { transactions: 1 });
    expect((await stats(em, 'vacuum_probe_old')).last_vacuum, 'past a limit of 1').to.not.equal(null);
  });

  it('analyses the embedded database from a sample of 3,000 rows (statistics target 10), not 30,000', async function () {
    // An analysis holds the embedded database's one connection: every message waits behind it.
    // The sample is 300 rows per unit of the target, and the histogram has target + 1 bounds.
    if (mode !== 'embedded') return this.skip();
    const em = server.deps.db.orm.em;
    await inserted(em, 'vacuum_probe_sampled', 20_000);
    await vacuumDueTables(em);
    const [row] = await em
      .getConnection()
      .execute<Array<{ bounds: number }>>(
        `select array_length(histogram_bounds::text::int[], 1) as bounds from pg_stats where tablename = 'vacuum_probe_sampled' and attname = 'id'`,
      );
    expect(row?.bounds).to.equal(11);
  });
});
