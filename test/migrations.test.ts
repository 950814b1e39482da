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
      const migrations = await query('select name as value from mikro_orm_migrations');
      expect(migrations.map((r) => r.value)).to.deep.equal([
        'Migration20261121000000_initial',
        'Migration20261201000000_message_content',
        'Migration20261215000000_deliveries_read',
        'Migration20261220000000_client_message_ids',
        'Migration20261220000000_push',
        'Migration20261228000000_operator_disabled',
      ]);
      const operators = await query('select email as value from operators');
      expect(operators.map((r) => r.value)).to.deep.equal(['race@palaver.test']);
      await Promise.all(nodes.map((n) => n.close()));
    } finally {
      await database.drop();
    }
  });
});
