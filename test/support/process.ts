// Palaver as a real operating-system process (the server, `src/main.ts`; the admin command line,
// `scripts/admin.ts`), for what only a process shows: start-up from the environment, restarts,
// signals, exit codes. The processes run the run's bundle of those programs (bundle.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { bundled, ROOT, type Program } from './bundle.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export { ROOT };

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** False once the process exited, whatever the reason. */
  running(): boolean;
  /** Sends the signal and resolves with the exit code (or the signal that ended it) and how long the exit took. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; ms: number; signal: NodeJS.Signals | null }>;
}

export interface ExitedProcess {
  code: number | null;
  stdout: string;
  stderr: string;
}

function launch(program: Program, args: string[], env: Record<string, string | undefined>): ChildProcess {
  // --liftoff-only: V8 compiles PGlite's WebAssembly with its baseline compiler and never again
  // with the optimizing one, which a process that lives for a command or a few requests would pay
  // for (about half a CPU second each) and hardly use. What the process does is the same.
  return spawn(process.execPath, ['--liftoff-only', bundled(program), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** The environment of one node of several: the same database and Redis, and the operator it makes at its first start. */
export function nodeEnv(
  database: TestDatabase,
  redisUrl: string,
  admin: { email: string; password: string },
): Record<string, string | undefined> {
  return {
    DATABASE_URL: database.databaseUrl,
    PALAVER_DATA_DIR: database.dataDir,
    REDIS_URL: redisUrl,
    PALAVER_ADMIN_EMAIL: admin.email,
    PALAVER_ADMIN_PASSWORD: admin.password,
  };
}

/**
 * Starts `src/main.ts` and resolves when it logs that it listens. The time limit only turns a hang
 * into a message with the output: a first start on nothing (initdb, every migration) took more than
 * a minute beside other suites (load average 30).
 */
export function startProcess(env: Record<string, string | undefined>, timeoutMs = 180_000): Promise<ServerProcess> {
  const child = launch('src/main.ts', [], { LOG_LEVEL: 'info', ...env });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      // The same words in JSON and in readable lines (PALAVER_LOG_FORMAT=pretty).
      const match = /palaver listening on http:\/\/[^:\s]+:(\d+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        child,
        url: `http://127.0.0.1:${match[1]}`,
        output: () => output,
        running: () => child.exitCode === null && child.signalCode === null,
        stop: (signal = 'SIGTERM') =>
          new Promise((done) => {
            const started = Date.now();
            // Already gone (a crash, or a signal: then exitCode is null and signalCode is set).
            if (child.exitCode !== null || child.signalCode !== null)
              return done({ code: child.exitCode, ms: 0, signal: child.signalCode });
            child.once('exit', (code, exitSignal) => done({ code, ms: Date.now() - started, signal: exitSignal }));
            child.kill(signal);
          }),
      });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
}

/** Runs a program to completion (the CLI, or a start that is expected to fail). */
export function runProcess(program: Program, args: string[], env: Record<string, string | undefined>): Promise<ExitedProcess> {
  const child = launch(program, args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

export interface ProcessFixture {
  /** The current test's database: a copy of the template, made before each test. */
  readonly database: TestDatabase;
  /** The environment that points a process at it. */
  env(): Record<string, string | undefined>;
  /** Starts the server on it, with `env` added; whatever still runs after the test is killed. */
  start(env?: Record<string, string | undefined>): Promise<ServerProcess>;
  /** Runs a program to completion on it, with `env` added. */
  run(program: Program, args: string[], env?: Record<string, string | undefined>): Promise<ExitedProcess>;
  /** Replaces the test's database with an empty one, for what a first start does on nothing. */
  emptyDatabase(): Promise<void>;
}

/**
 * For a `describe` whose tests start processes: a database of its own for each test, and after
 * each test every process it started killed and the database dropped. `common` is added to the
 * environment of every process.
 */
export function processFixture(label: string, common: Record<string, string | undefined> = {}): ProcessFixture {
  let database: TestDatabase | undefined;
  const started: ServerProcess[] = [];
  const current = () => {
    if (!database) throw new Error('no database outside a test');
    return database;
  };
  const env = () => ({ ...common, PALAVER_DATA_DIR: current().dataDir, DATABASE_URL: current().databaseUrl });

  beforeEach(async () => {
    database = await createTestDatabase(label);
  });

  afterEach(async () => {
    await Promise.all(started.splice(0).map((running) => running.stop('SIGKILL')));
    await database?.drop();
    database = undefined;
  });

  return {
    get database() {
      return current();
    },
    env,
    async start(extra = {}) {
      const running = await startProcess({ ...env(), ...extra });
      started.push(running);
      return running;
    },
    run: (program, args, extra = {}) => runProcess(program, args, { ...env(), ...extra }),
    async emptyDatabase() {
      await current().drop();
      database = await createTestDatabase(label, { empty: true });
    },
  };
}
