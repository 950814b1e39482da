// Whole Palaver servers for tests, in this process, on port 0, configured as in production
// but from config/test.json. The tests of a process share one (see hooks.ts); a test that needs
// its own configuration starts another.
import { loadConfig, type Config } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export const TEST_ADMIN = { email: 'admin@palaver.test', password: 'correct horse battery staple' };

export interface TestServer extends RunningServer {
  database: TestDatabase;
  config: Config;
  stop(): Promise<void>;
}

export async function startTestServer(overrides: Record<string, unknown> = {}): Promise<TestServer> {
  const database = await createTestDatabase();
  const config = loadConfig({
    env: {
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.LOG_LEVEL,
      REDIS_URL: process.env.TEST_REDIS_URL,
      PALAVER_ADMIN_EMAIL: TEST_ADMIN.email,
      PALAVER_ADMIN_PASSWORD: TEST_ADMIN.password,
    },
    // Merged deeply into the configuration, like every other source.
    overrides: { databaseUrl: database.databaseUrl, dataDir: database.dataDir, ...overrides },
  });
  try {
    const server = await startServer(config);
    // A node serves before Redis is connected (limits in memory meanwhile); tests that count
    // limits or share notices across nodes start from a connected Redis.
    if (server.deps.redis) await redisReady(server.deps.redis);
    return {
      ...server,
      database,
      config,
      async stop() {
        await server.close();
        await database.drop();
      },
    };
  } catch (err) {
    await database.drop();
    throw err;
  }
}

async function redisReady(redis: { status: string }, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (redis.status !== 'ready') {
    if (Date.now() > until) throw new Error(`redis not ready after ${timeoutMs} ms (status ${redis.status})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let shared: TestServer | undefined;

export function setSharedServer(server: TestServer | undefined): void {
  shared = server;
}

/** The shared server if this process started it yet. */
export function sharedServerStarted(): TestServer | undefined {
  return shared;
}

/** The server the tests of this process share; each test makes its own account on it. */
export function sharedServer(): TestServer {
  if (!shared) throw new Error('the shared test server is not running (see test/support/hooks.ts)');
  return shared;
}
