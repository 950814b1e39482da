// BEGIN and COMMIT queued with statements on pg's pipeline mode (src/db/pipelined.ts), on the
// suite's database (the embedded one through PGlite's socket server, or PostgreSQL with
// TEST_DATABASE_URL): fewer round trips, and with one Sync per query every failure still fails
// the call that should report it, and nothing commits that should not.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { expect } from 'chai';
import type pg from 'pg';
import { prepared } from '../src/db/prepared.ts';
import { heldTransaction } from '../src/db/tx/held.ts';
import { sharedServer } from './support/server.ts';

/** The pg client under a transaction. */
async function clientOf(tx: EntityManager): Promise<pg.Client> {
  const trx = tx.getTransactionContext<{ client: { acquireConnection(): Promise<pg.Client> } }>();
  if (!trx) throw new Error('not in a transaction');
  return trx.client.acquireConnection();
}

/** Counts round trips from now on: the client goes idle ('drain') once all it sent is answered. */
function countRoundTrips(client: pg.Client): () => number {
  let count = 0;
  client.on('drain', () => count++);
  return () => count;
}

const outcome = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => null,
    (err: unknown) => err,
  );

describe('pipelined transactions', () => {
  const table = `pipelined_${randomBytes(4).toString('hex')}`;
  const em = () => sharedServer().deps.db.orm.em.fork();
  const rows = async () =>
    (await em().getConnection().execute<Array<{ id: number }>>(`select id from ${table} order by id`)).map((r) => r.id);
  const insertSql = `insert into ${table} (id) values (?::int)`;
  const insert = (tx: EntityManager, id: unknown, commit = false) => prepared(tx, insertSql, [id], { commit });

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

  it('queues BEGIN with the first statement and COMMIT behind the last: two statements, two round trips', async () => {
    let roundTrips = () => -1;
    await em().transactional(async (tx) => {
      roundTrips = countRoundTrips(await clientOf(tx));
      await insert(tx, 1);
      await insert(tx, 2, true);
    });
    expect(roundTrips()).to.equal(2);
    expect(await rows()).to.deep.equal([1, 2]);
  });

  it('takes one round trip for a transaction of one statement (BEGIN, it and COMMIT in one write)', async () => {
    let roundTrips = () => -1;
    await em().transactional(async (tx) => {
      roundTrips = countRoundTrips(await clientOf(tx));
      await insert(tx, 1, true);
    });
    expect(roundTrips()).to.equal(1);
    expect(await rows()).to.deep.equal([1]);
  });

  it('sends nothing for a transaction without statements', async () => {
    let roundTrips = () => -1;
    await em().transactional(async (tx) => {
      roundTrips = countRoundTrips(await clientOf(tx));
    });
    expect(roundTrips()).to.equal(0);
  });

  it('commits with knex when no statement carried the COMMIT', async () => {
    await em().transactional(async (tx) => {
      await insert(tx, 1);
      await insert(tx, 2);
    });
    expect(await rows()).to.deep.equal([1, 2]);
  });

  it('fails the statement carrying the COMMIT with its own error (the COMMIT answers ROLLBACK), and writes nothing', async () => {
    const failed = await outcome(
      em().transactional(async (tx) => {
        await insert(tx, 1);
        await insert(tx, null, true);
      }),
    );
    expect(failed).to.have.property('code', '23502');
    expect(await rows()).to.deep.equal([]);
  });

  it('fails the statement that carried a COMMIT that failed, and writes nothing; the connection goes on', async () => {
    const failed = await outcome(
      em().transactional(async (tx) => {
        await insert(tx, 1);
        await insert(tx, 1, true);
      }),
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

  it('fails a statement queued behind one that failed (it ran in the aborted transaction), and writes nothing', async () => {
    let codes: unknown[] = [];
    await outcome(
      em().transactional(async (tx) => {
        const calls = [insert(tx, 1), insert(tx, null), insert(tx, 2, true)].map(outcome);
        codes = (await Promise.all(calls)).map((err) => (err as { code?: string } | null)?.code ?? null);
        throw new Error('rolled back');
      }),
    );
    // 25P02: current transaction is aborted; the COMMIT behind the last one answered ROLLBACK.
    expect(codes).to.deep.equal([null, '23502', '25P02']);
    expect(await rows()).to.deep.equal([]);
  });

  it('queues no COMMIT behind a statement pg could not send (a value it cannot serialize): nothing is written', async () => {
    const unserializable = {
      toPostgres() {
        throw new Error('no text for this value');
      },
    };
    const failed = await outcome(
      em().transactional(async (tx) => {
        await insert(tx, 1);
        // A statement of its own: pg closes the prepared statement of a value it failed to bind,
        // yet keeps it as prepared on the connection, so its later uses there would fail.
        await prepared(tx, `${insertSql} -- unserializable`, [unserializable], { commit: true });
      }),
    );
    expect(String(failed)).to.match(/no text for this value/);
    expect(await rows()).to.deep.equal([]);
    await em().transactional((tx) => insert(tx, 2, true));
    expect(await rows()).to.deep.equal([2]);
  });

  it("fails knex's COMMIT when PostgreSQL answers it ROLLBACK (a failed statement was caught and the work went on)", async () => {
    const failed = await outcome(
      em().transactional(async (tx) => {
        await insert(tx, 1);
        await outcome(insert(tx, null));
      }),
    );
    expect(String(failed)).to.match(/rolled back at COMMIT/);
    expect(await rows()).to.deep.equal([]);
  });

  it('refuses a statement after the one that carried the COMMIT (it would run outside the transaction)', async () => {
    const failed = await outcome(
      em().transactional(async (tx) => {
        await insert(tx, 1, true);
        await insert(tx, 2);
      }),
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

  it('fails a statement that does not parse the same way each time, with the BEGIN before it', async () => {
    for (let i = 0; i < 2; i++) {
      const failed = await outcome(em().transactional((tx) => prepared(tx, `insert into ${table} (id) valuez (?::int)`, [1])));
      expect(failed, `attempt ${i + 1}`).to.have.property('code', '42601');
    }
  });

  it('keeps the same outcomes in a held transaction: a failed statement carrying the COMMIT writes nothing', async () => {
    const failed = await outcome(
      heldTransaction(em(), async (tx) => {
        await prepared(tx, insertSql, [1]);
        await prepared(tx, insertSql, [null], { commit: true });
      }),
    );
    expect(failed).to.have.property('code', '23502');
    const { result } = await heldTransaction(em(), async (tx) => {
      await prepared(tx, insertSql, [5]);
      return prepared<{ id: number }>(tx, `select id from ${table} order by id`, [], { commit: true });
    });
    expect(result).to.deep.equal([{ id: 5 }]);
  });
});
