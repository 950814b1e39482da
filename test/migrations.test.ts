import { expect } from 'chai';
import { createTestDatabase, mode } from './support/database.ts';
import { loadConfig } from '../src/config.ts';
import { migrationsList } from '../src/db/migrations/index.ts';
import { startServer } from '../src/server.ts';
import { openDatabase } from '../src/db/orm.ts';
import { createLogger } from '../src/logger.ts';

describe('migrations', function () {
  this.timeout(120_000);

  (mode === 'postgresql' ? it : it.skip)('apply once, and bootstrap one operator, when several nodes start together', async () => {
    const database = await createTestDatabase('migr', { empty: true });
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

  it('give every account that existed before the inbox its inbox Service, once', async () => {
    const database = await createTestDatabase('inboxmigr', { empty: true });
    const db = await openDatabase(database, createLogger({ logLevel: 'silent' }));
    try {
      const migrator = db.orm.getMigrator();
      await migrator.up({ to: 'Migration20261231000000_authorization_secret_rotation' });
      const sql = <T>(text: string) => db.orm.em.fork().getConnection().execute<T[]>(text);
      await sql(
        `insert into accounts (identification, name, authorization_secret) values ('AAAAAAAAAAAAAAAA', 'Old', 'x'), ('BBBBBBBBBBBBBBBB', 'Older', 'y')`,
      );
      await sql(`insert into services (account_id, name, identification, webhook_url, signing_secret)
                 select id, 'Bot', 'bot' || id, 'https://bot.example/hook', 'whsec_x' from accounts where name = 'Old'`);
      // A conversation: asked, answered, asked again (waiting since the second question); and a user without messages.
      await sql(`insert into users (account_id, kind, owner_service_id)
                 select s.account_id, 'anonymous', s.id from services s where s.identification like 'bot%'`);
      await sql(`insert into users (account_id, kind, owner_service_id)
                 select s.account_id, 'anonymous', s.id from services s where s.identification like 'bot%'`);
      await sql(`insert into messages (id, user_id, type_id, message, created_at)
                 select 101, min(id), 1, 'first', '2026-12-01T10:00:00Z'::timestamptz from users
                 union all select 102, min(id), 2, 'answer', '2026-12-01T10:01:00Z'::timestamptz from users
                 union all select 103, min(id), 1, 'again', '2026-12-01T10:02:00Z'::timestamptz from users`);
      await migrator.up();
      const states = await sql<{ status: string; waiting_since: Date | string; read_message_id: string | number }>(
        `select status, waiting_since, read_message_id from conversation_states`,
      );
      expect(states.map((r) => [r.status, new Date(r.waiting_since).toISOString(), Number(r.read_message_id)])).to.deep.equal([
        ['open', '2026-12-01T10:02:00.000Z', 102],
      ]);
      const rows = await sql<{ name: string; kind: string; webhook_url: string | null; identification: string; signing_secret: string }>(
        `select a.name, s.kind, s.webhook_url, s.identification, s.signing_secret from services s join accounts a on a.id = s.account_id order by a.name, s.id`,
      );
      expect(rows.map((r) => [r.name, r.kind, r.webhook_url])).to.deep.equal([
        ['Old', 'webhook', 'https://bot.example/hook'],
        ['Old', 'inbox', null],
        ['Older', 'inbox', null],
      ]);
      for (const row of rows.filter((r) => r.kind === 'inbox')) {
        expect(row.identification).to.match(/^[a-z0-9]{16}$/);
        expect(row.signing_secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
      }
      // One inbox per account, an inbox never with a webhook.
      const second = await sql(`insert into services (account_id, name, identification, signing_secret, kind)
                                select id, 'Again', 'again' || id, 'whsec_x', 'inbox' from accounts limit 1`).then(
        () => 'inserted',
        (err: { code?: string }) => err.code,
      );
      expect(second).to.equal('23505');
      const hooked = await sql(`update services set webhook_url = 'https://x.example' where kind = 'inbox'`).then(
        () => 'updated',
        (err: { code?: string }) => err.code,
      );
      expect(hooked).to.equal('23514');
    } finally {
      await db.close();
      await database.drop();
    }
  });
});
