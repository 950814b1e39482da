// Mocha root hooks: one Palaver for the whole run, on the database mode the run is in.
import { buildWeb } from '../../scripts/build-web.ts';
import { dropTemplate, mode } from './database.ts';
import { setSharedServer, sharedServer, startTestServer } from './server.ts';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    // The bundles, the migrated template database (database.ts) and the shared server: a minute
    // or more on a busy machine.
    this.timeout(180_000);
    process.stdout.write(`  (database: ${mode}${process.env.TEST_REDIS_URL ? ', redis' : ''})\n`);
    // The browser bundles as the sources are now: no test runs a stale widget.
    await buildWeb();
    setSharedServer(await startTestServer());
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await sharedServer().stop();
    setSharedServer(undefined);
    await dropTemplate();
  },
};
