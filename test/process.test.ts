// Palaver as an operator runs it: `src/main.ts` in its own process, configured by environment.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { mode } from './support/database.ts';
import { client } from './support/http.ts';
import { processFixture, ROOT } from './support/process.ts';
import { freePort } from './support/redis.ts';

describe('the server process', function () {
  // A process or two per test, each a second or two of CPU.
  this.timeout(300_000);
  const proc = processFixture('proc');

  it('says what a start is doing from its first second, and prints one readable line per request at a terminal', async () => {
    const running = await proc.start({ PALAVER_LOG_FORMAT: 'pretty' });
    const lines = () => running.output().split('\n');
    expect(lines()[0], 'the first line').to.match(/INFO: starting Palaver \(NODE_ENV test, port 0\)$/);
    expect(running.output()).to.match(
      mode === 'embedded'
        ? /INFO: starting the embedded database in \S+/
        : /INFO: connecting to the database of DATABASE_URL \(postgresql:\/\/\S+\)/,
    );
    const api = client(running.url);
    expect((await api.get('/healthz')).status).to.equal(200);
    expect((await api.get('/no-such-page')).status).to.equal(404);
    for (let i = 0; i < 100 && !running.output().includes('/no-such-page'); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const access = lines().filter((line) => /\/healthz|\/no-such-page/.test(line));
    expect(access).to.have.length(2);
    expect(access[0]).to.match(/^\[[\d:.]+\] INFO: GET \/healthz 200 \d+ms$/);
    expect(access[1]).to.match(/^\[[\d:.]+\] INFO: GET \/no-such-page 404 \d+ms$/);
    const after = lines()[lines().indexOf(access[1]!) + 1] ?? '';
    expect(after, 'no field lines under it').to.not.match(/^\s+(method|path|status|ms|requestId):/);
  });

  it('names DATABASE_URL when it cannot be reached, after trying again for PALAVER_DATABASE_RETRY_SECONDS', async () => {
    const closedPort = await freePort();
    const started = Date.now();
    const result = await proc.run('src/main.ts', [], {
      DATABASE_URL: `postgresql://palaver:secret-password@127.0.0.1:${closedPort}/palaver`,
      PALAVER_DATABASE_RETRY_SECONDS: '5',
      LOG_LEVEL: 'info',
    });
    expect(result.code).to.equal(1);
    const said = result.stdout + result.stderr;
    const retries = said.split('\n').filter((line) => line.includes('trying again in 2 s'));
    expect(retries.length, said).to.be.within(1, 3);
    expect(retries[0]).to.contain(`DATABASE_URL (postgresql://palaver@127.0.0.1:${closedPort}/palaver) cannot be reached`);
    expect(said).to.match(
      /DATABASE_URL \(postgresql:\/\/palaver@127\.0\.0\.1:\d+\/palaver\) cannot be reached: .*ECONNREFUSED.* \(tried for \d+ s\)/,
    );
    expect(said, 'the password is never shown').to.not.contain('secret-password');
    expect(Date.now() - started, 'it waited').to.be.greaterThan(4000);
  });

  it('stops when the `npm start` process is killed: the signal reaches the server, and nothing keeps the port or the data directory', async () => {
    const port = await freePort();
    // `npm start` exactly as a newcomer runs it: npm, its shell, then the server.
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test', LOG_LEVEL: 'info', PORT: String(port), ...proc.env() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      for (let i = 0; i < 1200 && !output.includes('palaver listening'); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(output, 'it started').to.contain('palaver listening');
      npm.kill('SIGTERM');
      await exited;
      for (let i = 0; i < 200 && !output.includes('palaver stopped'); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(output, 'the server itself shut down').to.contain('palaver stopped');
      expect(await portOpen(port), 'nothing listens on the port').to.equal(false);
      if (mode === 'embedded')
        expect(existsSync(path.join(proc.database.dataDir, 'palaver.lock')), 'the data lock is released').to.equal(false);
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL');
      // A server left behind by a failure of this test: its pid is in the data lock.
      const lock = path.join(proc.database.dataDir, 'palaver.lock');
      if (existsSync(lock)) {
        const pid = Number.parseInt(readFileSync(lock, 'utf8'), 10);
        if (pid > 0 && pid !== process.pid) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // Gone already.
          }
        }
      }
    }
  });

  it('refuses to start in production with a password hash cost below the default', async () => {
    const result = await proc.run('src/main.ts', [], { NODE_ENV: 'production', PALAVER_PASSWORD_HASH_COST: '10' });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain('Invalid configuration');
    expect(result.stderr).to.contain('PALAVER_PASSWORD_HASH_COST (security.passwordHashCost): must be at least 15 in production');
  });

  it('stops at start with a message naming a wrong configuration value', async () => {
    const result = await proc.run('src/main.ts', [], { PORT: 'eighty', PALAVER_RETRY_SCHEDULE: 'x' });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain('Invalid configuration');
    expect(result.stderr).to.contain('PORT');
    expect(result.stderr).to.contain('PALAVER_RETRY_SCHEDULE');
  });

  if (mode === 'embedded') {
    it('refuses to open an embedded data directory that a running server holds', async () => {
      const running = await proc.start();
      const second = await proc.run('src/main.ts', []);
      expect(second.code).to.equal(1);
      expect(second.stdout + second.stderr).to.contain('is in use by process');
      expect((await client(running.url).get('/readyz')).status, 'the first one still serves').to.equal(200);
    });
  }
});

/** Whether something accepts connections on the port now. */
function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
