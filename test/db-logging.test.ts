// The pg driver's failures reach the logger, not bare lines on the console: a pooled connection
// the server ended is reported by knex ("Connection Error: …") through pino.
import { expect } from 'chai';
import pg from 'pg';
import { pino } from 'pino';
import { openDatabase } from '../src/db/orm.ts';
import { createTestDatabase, mode } from './support/database.ts';

describe('database driver logging', function () {
  this.timeout(30_000);

  it('logs a pooled connection the server ended through the logger, and the next query works', async function () {
    if (mode !== 'postgresql') this.skip();
    const database = await createTestDatabase('pglog');
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const db = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir }, logger);
    const printed: unknown[] = [];
    const consoleLog = console.log;
    console.log = (...args: unknown[]) => printed.push(args);
    try {
      const connection = db.orm.em.fork().getConnection();
      const [pid] = await connection.execute<Array<{ pid: number }>>('select pg_backend_pid() as pid');
      const killer = new pg.Client({ connectionString: database.databaseUrl });
      await killer.connect();
      await killer.query('select pg_terminate_backend($1)', [pid?.pid]);
      await killer.end();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const [row] = await connection.execute<Array<{ one: number }>>('select 1 as one');
      expect(row?.one).to.equal(1);
    } finally {
      console.log = consoleLog;
      await db.close();
      await database.drop();
    }
    expect(printed.map(String).filter((p) => p.includes('Connection Error'))).to.deep.equal([]);
    const reported = lines.filter((l) => l.db === 'knex' && String(l.msg).startsWith('Connection Error'));
    expect(reported, JSON.stringify(lines)).to.have.length.greaterThan(0);
    expect(reported[0]?.level).to.equal(40);
  });
});
