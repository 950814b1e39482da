// Mocha root hooks: one Palaver for the whole run, on the database mode the run is in.
import { mode } from './database.ts';
import { setSharedServer, sharedServer, startTestServer } from './server.ts';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    process.stdout.write(`  (database: ${mode}${process.env.TEST_REDIS_URL ? ', redis' : ''})\n`);
    setSharedServer(await startTestServer());
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await sharedServer().stop();
    setSharedServer(undefined);
  },
};
