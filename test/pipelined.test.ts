// BEGIN and COMMIT sent with statements (src/db/pipelined.ts), on the suite's database (the
// embedded one, or PostgreSQL with TEST_DATABASE_URL): fewer round trips, and every outcome
// the same as sending them one by one.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { expect } from 'chai';
import { prepared } from '../src/db/prepared.ts';
import { sharedServer } from './support/server.ts';

/** The pg connection under a transaction: its readyForQuery events count the round trips. */
async function wireOf(tx: EntityManager): Promise<{ on(event: 'readyForQuery', listener: () => void): void }> {
  const trx = tx.getTransactionContext<{ client: { acquireConnection(): Promise<{ connection: never }> } }>();
  if (!trx) throw new Error('not in a transaction');
  return (await trx.client.acquireConnection()).connection;
}

describe('pipelined transactions', () => {
  const table = `pipelined_${randomBytes(4).toString('hex')}`;
  const em = () => sharedServer().deps.db.orm.em.fork();
  const rows = async () =>
    (await em().getConnection().execute<Array<{ id: number }>>(`select id from ${table} order by id`)).map((r) => r.id);
  const insert = (tx: EntityManager, id: number, commit = false) =>
    prepared(tx, `insert into ${table} (id) values (?::int)`, [id], { commit });

  before(async () => {
    // Unique at COMMIT, so that a COMMIT can fail.
    await em()
      .getConnection()
      .execute(`create table ${table} (id int not null, constraint ${table}_id unique (id) deferrable initially deferred)`);
  });
  after(async () => {
    await em().getConnection().execute(`drop table ${table}`);
  });
  beforeEach(async () => {
    await em().getConnection().execute(`delete from ${table}`);
  });

  it('sends BEGIN with the first statement and COMMIT with the last: two statements, two round trips', async () => {
    let roundTrips = 0;
    await em().transactional(async (tx) => {
      (await wireOf(tx)).on('readyForQuery', () => roundTrips++);
      await insert(tx, 1);
      await insert(tx, 2, true);
    });
    expect(roundTrips).to.equal(2);
    expect(await rows()).to.deep.equal([1, 2]);
  });

  it('sends nothing for a transaction without statements', async () => {
    let roundTrips = 0;
    await em().transactional(async (tx) => {
      (await wireOf(tx)).on('readyForQuery', () => roundTrips++);
    });
    expect(roundTrips).to.equal(0);
  });

  it('commits with knex when no statement carried the COMMIT', async () => {
    await em().transactional(async (tx) => {
      await insert(tx, 1);
      await insert(tx, 2);
    });
    expect(await rows()).to.deep.equal([1, 2]);
  });

  it('rolls back the statements before one that fails: the BEGIN went out', async () => {
    const failed = await em()
      .transactional(async (tx) => {
        await insert(tx, 1);
        await prepared(tx, `insert into ${table} (id) values (?::int)`, [null], { commit: true });
      })
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(failed).to.have.property('code', '23502');
    expect(await rows()).to.deep.equal([]);
  });

  it('fails the statement that carried a COMMIT that failed, and writes nothing; the connection goes on', async () => {
    const failed = await em()
      .transactional(async (tx) => {
        await insert(tx, 1);
        await insert(tx, 1, true);
      })
      .then(
        () => null,
        (err: unknown) => err,
      );
    // The deferred unique constraint is checked by the COMMIT.
    expect(failed).to.have.property('code', '23505');
    expect(await rows()).to.deep.equal([]);
    await em().transactional(async (tx) => {
      await insert(tx, 3);
      await insert(tx, 4, true);
    });
    expect(await rows()).to.deep.equal([3, 4]);
  });

  it('refuses a statement after the one that carried the COMMIT (it would run outside the transaction)', async () => {
    const failed = await em()
      .transactional(async (tx) => {
        await insert(tx, 1, true);
        await insert(tx, 2);
      })
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(String(failed)).to.match(/after the transaction's last one/);
    // What the last statement committed stays committed; nothing after it ran.
    expect(await rows()).to.deep.equal([1]);
  });

  it('does not carry the COMMIT from inside a savepoint', async () => {
    await em().transactional(async (outer) => {
      await insert(outer, 1);
      await outer.transactional(async (inner) => {
        await insert(inner, 2, true);
      });
      await insert(outer, 3);
    });
    expect(await rows()).to.deep.equal([1, 2, 3]);
  });

  it('does not take a statement that failed to parse with a BEGIN for prepared: it fails the same way again', async () => {
    for (let i = 0; i < 2; i++) {
      const failed = await em()
        .transactional((tx) => prepared(tx, `insert into ${table} (id) valuez (?::int)`, [1]))
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(failed, `attempt ${i + 1}`).to.have.property('code', '42601');
    }
  });
});
