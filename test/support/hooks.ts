// Mocha's global fixtures and root hooks, for a serial run (one process) and for `npm test`'s
// parallel one (.mocharc.json: mocha's main process and a worker process per job, each worker
// running whole test files one after another).
//
// The global setup runs once, in the main process, before any worker starts: the browser bundles,
// the run's migrated template database (database.ts) and the bundle of the programs tests start
// as processes (bundle.ts), which the workers find through the environment they inherit. Each process that runs tests has one shared Palaver on the run's
// database mode, started by the first file it runs (in parallel mode mocha runs root beforeAll
// hooks once per file). A worker's server lives as long as the worker, which mocha ends with
// process.exit; the global teardown then removes every database and directory of the run.
import { buildWeb } from '../../scripts/build-web.ts';
import { buildProcessBundle } from './bundle.ts';
import { makeTemplate, mode, removeRun, startRun, tempDir } from './database.ts';
import { setSharedServer, sharedServerStarted, startTestServer } from './server.ts';

export async function mochaGlobalSetup(): Promise<void> {
  process.stdout.write(`  (database: ${mode}${process.env.TEST_REDIS_URL ? ', redis' : ''})\n`);
  // Every bundle as the sources are now: no test runs a stale widget or server.
  startRun();
  await Promise.all([buildWeb(), makeTemplate(), buildProcessBundle(tempDir('bundle'))]);
}

export async function mochaGlobalTeardown(): Promise<void> {
  // A serial run's shared server is in this process; a parallel run's ended with its worker.
  await sharedServerStarted()?.stop();
  setSharedServer(undefined);
  await removeRun();
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    if (sharedServerStarted()) return;
    // A copy of the template and a whole server: seconds on a busy machine.
    this.timeout(120_000);
    setSharedServer(await startTestServer());
  },
};
