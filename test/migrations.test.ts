import { expect } from 'chai';
import { createTestDatabase, mode } from './support/database.ts';
import { loadConfig } from '../src/config.ts';
import { migrationsList } from '../src/db/migrations/index.ts';
import { startServer } from '../src/server.ts';

describe('migrations', function () {
  this.timeout(120_000);

  (mode === 'postgresql' ? it : it.skip)('apply once, and bootstrap one operator, when several nodes start together', async () => {
    const database = await createTestDatabase('migr');
    const config = loadConfig({
      env: { NODE_ENV: 'test' },
      overrides: {
        databaseUrl: database.databaseUrl,
        dataDir: database.dataDir,
        admin: { email: 'race@palaver.test', password: 'same for every node' },
      },
    });
    try {
      const nodes = await Promise.all([startServer(config), startServer(config), startServer(config)]);
      type Row = { value: string };
      const query = (sql: string) => nodes[0].deps.db.orm.em.fork().getConnection().execute<Row[]>(sql);
      const migrations = await query('select name as value from mikro_orm_migrations order by id');
      // Each migration once, in the listed order, however many nodes raced to run them.
      expect(migrations.map((r) => r.value)).to.deep.equal(migrationsList.map((m) => m.name));
      const operators = await query('select email as value from operators');
      expect(operators.map((r) => r.value)).to.deep.equal(['race@palaver.test']);
      await Promise.all(nodes.map((n) => n.close()));
    } finally {
      await database.drop();
    }
  });
});
