// Palaver as an operator runs it: `src/main.ts` in its own process, configured by environment.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { Secret, TOTP } from 'otpauth';
import { io } from 'socket.io-client';
import { createTestDatabase, mode, type TestDatabase } from './support/database.ts';
import { client } from './support/http.ts';
import { ROOT, runProcess, startProcess, type ServerProcess } from './support/process.ts';

describe('the server process', function () {
  // Several processes per test (the CLI tests start one per command), each a second or two of CPU.
  this.timeout(300_000);
  let database: TestDatabase;
  let running: ServerProcess | undefined;

  const env = () => ({ PALAVER_DATA_DIR: database.dataDir, DATABASE_URL: database.databaseUrl });

  beforeEach(async () => {
    database = await createTestDatabase('proc');
  });

  afterEach(async () => {
    await running?.stop('SIGKILL');
    running = undefined;
    await database.drop();
  });

  it(`starts with no setup (${mode}), keeps its data across a restart and exits cleanly on SIGTERM`, async () => {
    // Nothing at all, not even the tables: the first start creates and migrates the database.
    await database.drop();
    database = await createTestDatabase('proc', { empty: true });
    running = await startProcess({ ...env(), PALAVER_DEMO: 'true' });
    const api = client(running.url);
    expect((await api.get('/healthz')).status).to.equal(200);
    expect((await api.get('/readyz')).status).to.equal(200);

    // First start on an empty database: a demo operator, account and Service, printed once.
    const [, email, password, accountId] = await demoBanner(running);
    const login = await api.post<{ token: string }>('/adminApi/login', { json: { email, password } });
    expect(login.status).to.equal(200);
    const created = await api.post<{ id: number }>('/adminApi/accounts', {
      token: login.body.data.token,
      json: { name: 'Survives restarts' },
    });
    expect(created.status).to.equal(201);

    const first = await running.stop('SIGTERM');
    expect(first.code).to.equal(0);
    expect(running.output()).to.contain('palaver stopped');

    running = await startProcess({ ...env(), PALAVER_DEMO: 'true' });
    expect(running.output(), 'the demo is made only once').to.not.contain('demo account');
    const again = client(running.url);
    const relogin = await again.post<{ token: string }>('/adminApi/login', { json: { email, password } });
    expect(relogin.status).to.equal(200);
    const token = relogin.body.data.token;
    expect((await again.get(`/adminApi/accounts/${accountId}`, { token })).status).to.equal(200);
    const kept = await again.get<{ name: string }>(`/adminApi/accounts/${created.body.data.id}`, { token });
    expect(kept.body.data.name).to.equal('Survives restarts');

    const second = await running.stop('SIGTERM');
    expect(second.code).to.equal(0);
  });

  it('lets open chat sockets reconnect by themselves across a graceful restart, and catch up', async () => {
    const port = await freePort();
    running = await startProcess({ ...env(), PALAVER_DEMO: 'true', PORT: String(port) });
    const identification = (await demoBanner(running))[4];
    const { apiKey } = JSON.parse(readFileSync(path.join(database.dataDir, 'demo-bot.json'), 'utf8')) as { apiKey: string };
    const api = client(running.url);
    const headers = { 'x-iris-identification': `${identification}:process-restart-device` };
    const registered = await api.post<{ userId: number }>('/clientApi/v1.9/devices', { headers, json: {} });
    expect(registered.status, registered.text).to.equal(200);

    // As the widget and the Parley clients connect: reconnection on, the last message id sent each time.
    let lastMessageId = 0;
    const socket = io(running.url, {
      transports: ['websocket'],
      reconnectionDelay: 100,
      reconnectionDelayMax: 500,
      auth: (cb) => cb({ identification: headers['x-iris-identification'], lastMessageId }),
    });
    const texts: string[] = [];
    socket.on('message', (message: { id: number; message: string }) => {
      lastMessageId = message.id;
      texts.push(message.message);
    });
    const disconnected = new Promise<string>((resolve) => socket.once('disconnect', resolve));
    try {
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      const stopped = await running.stop('SIGTERM');
      expect(stopped.code).to.equal(0);
      expect(await disconnected, 'a reason the client reconnects on (not "io server disconnect")').to.equal('transport close');

      running = await startProcess({ ...env(), PALAVER_DEMO: 'true', PORT: String(port) });
      const reconnected = new Promise((resolve) => socket.io.once('reconnect', resolve));
      const sent = await client(running.url).post(`/users/${registered.body.data.userId}/messages`, {
        token: apiKey,
        json: { message: 'answered while the widget was away', agent: { id: 1, name: 'Ada' } },
      });
      expect(sent.status, sent.text).to.equal(201);
      await reconnected;
      for (let i = 0; i < 100 && texts.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(texts).to.deep.equal(['answered while the widget was away']);
    } finally {
      socket.close();
    }
  });

  it('writes nothing when its port is taken (EADDRINUSE, said in one line); the next start shows the demo login, which works', async () => {
    const port = await freePort();
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '0.0.0.0', resolve));
    let failed;
    try {
      failed = await runProcess('src/main.ts', [], { ...env(), PALAVER_DEMO: 'true', PORT: String(port), LOG_LEVEL: 'info' });
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
    expect(failed.code).to.equal(1);
    const said = failed.stdout + failed.stderr;
    expect(said).to.contain(`Port ${port} (127.0.0.1) is in use by another program (EADDRINUSE)`);
    expect(said, 'no banner of a demo it could not serve').to.not.contain('demo account');
    expect(said, 'one line, no stack').to.not.contain('    at ');

    running = await startProcess({ ...env(), PALAVER_DEMO: 'true', PORT: String(port) });
    const [, email, password] = await demoBanner(running);
    const login = await client(running.url).post<{ token: string }>('/adminApi/login', { json: { email, password } });
    expect(login.status, login.text).to.equal(200);
  });

  it('shows the demo login at every start until its operator signs in, kept meanwhile in a file only its owner reads', async () => {
    running = await startProcess({ ...env(), PALAVER_DEMO: 'true' });
    const [, email, password] = await demoBanner(running);
    const kept = path.join(database.dataDir, 'demo-login.json');
    expect(statSync(kept).mode & 0o777, 'owner only').to.equal(0o600);
    // The terminal was closed before the password was copied: the next start shows it again.
    const stopped = await running.stop('SIGTERM');
    expect(stopped, running.output()).to.include({ code: 0, signal: null });
    running = await startProcess({ ...env(), PALAVER_DEMO: 'true' });
    const [, againEmail, againPassword] = await demoBanner(running);
    expect([againEmail, againPassword]).to.deep.equal([email, password]);
    expect(running.output()).to.contain(`until you sign in as ${email}`);
    const login = await client(running.url).post('/adminApi/login', { json: { email, password } });
    expect(login.status, login.text).to.equal(200);
    expect(existsSync(kept), 'forgotten once used').to.equal(false);
    expect((await running.stop('SIGTERM')).code).to.equal(0);
    running = await startProcess({ ...env(), PALAVER_DEMO: 'true' });
    expect(running.output(), 'not shown after a sign-in').to.not.contain('demo account');
  });

  it('says what a start is doing from its first second, and prints one readable line per request at a terminal', async () => {
    running = await startProcess({ ...env(), PALAVER_LOG_FORMAT: 'pretty' });
    const lines = () => running!.output().split('\n');
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
    const result = await runProcess('src/main.ts', [], {
      PALAVER_DATA_DIR: database.dataDir,
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
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test', LOG_LEVEL: 'info', PORT: String(port), ...env() },
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
      if (mode === 'embedded') expect(existsSync(path.join(database.dataDir, 'palaver.lock')), 'the data lock is released').to.equal(false);
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL');
      // A server left behind by a failure of this test: its pid is in the data lock.
      const lock = path.join(database.dataDir, 'palaver.lock');
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
    const result = await runProcess('src/main.ts', [], { ...env(), NODE_ENV: 'production', PALAVER_PASSWORD_HASH_COST: '10' });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain('Invalid configuration');
    expect(result.stderr).to.contain('PALAVER_PASSWORD_HASH_COST (security.passwordHashCost): must be at least 15 in production');
  });

  it('makes a one-time password-reset link, and turns two-factor sign-in off, from the command line (npm run admin)', async () => {
    const email = 'forgot@example.com';
    const created = await runProcess('scripts/admin.ts', ['operator:create', '--email', email, '--password', 'the old password'], env());
    expect(created.code, created.stderr).to.equal(0);
    const weak = await runProcess(
      'scripts/admin.ts',
      ['operator:create', '--email', 'weak@example.com', '--password', 'password1234'],
      env(),
    );
    expect(weak.code).to.equal(2);
    expect(weak.stderr).to.contain('--password: is one of the most common passwords');

    const reset = await runProcess('scripts/admin.ts', ['operator:reset-password', '--email', email.toUpperCase()], env());
    expect(reset.code, reset.stderr).to.equal(0);
    const printed = JSON.parse(reset.stdout) as { operator: string; url: string; expiresAt: string };
    expect(printed.operator).to.equal(email);
    expect(printed.url).to.match(/^http:\/\/localhost:\d+\/dashboard#\/reset-password\/prt_[\w-]{43}$/);
    expect(Date.parse(printed.expiresAt)).to.be.greaterThan(Date.now());
    const unknown = await runProcess('scripts/admin.ts', ['operator:reset-password', '--email', 'nobody@example.com'], env());
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.contain('no operator has the email nobody@example.com');

    running = await startProcess(env());
    const api = client(running.url);
    const token = printed.url.split('/').pop();
    const used = await api.post('/adminApi/password-reset', { json: { token, password: 'a brand new password' } });
    expect(used.status, JSON.stringify(used.body)).to.equal(200);
    const again = await api.post('/adminApi/password-reset', { json: { token, password: 'another new password' } });
    expect(again.status, 'single use').to.equal(400);
    expect(again.body.notifications[0]?.message).to.equal('invalid_reset_token');
    expect((await api.post('/adminApi/login', { json: { email, password: 'the old password' } })).status).to.equal(401);
    const signedIn = await api.post<{ token: string }>('/adminApi/login', { json: { email, password: 'a brand new password' } });
    expect(signedIn.status).to.equal(200);

    // Lost authenticator and recovery codes: the command line turns two-factor sign-in off.
    const sessionToken = signedIn.body.data.token;
    const enrolment = await api.post<{ secret: string }>('/adminApi/me/two-factor', { token: sessionToken });
    const code = new TOTP({ secret: Secret.fromBase32(enrolment.body.data.secret) }).generate();
    expect((await api.post('/adminApi/me/two-factor/confirm', { token: sessionToken, json: { code } })).status).to.equal(200);
    const challenged = await api.post<{ twoFactorRequired: boolean }>('/adminApi/login', {
      json: { email, password: 'a brand new password' },
    });
    expect(challenged.body.data.twoFactorRequired).to.equal(true);
    await running.stop('SIGTERM');
    running = undefined;
    const off = await runProcess('scripts/admin.ts', ['operator:two-factor-off', '--email', email], env());
    expect(off.code, off.stderr).to.equal(0);
    expect(JSON.parse(off.stdout)).to.deep.equal({ operator: email, twoFactorEnabled: false });
    running = await startProcess(env());
    const plain = await client(running.url).post<{ token: string }>('/adminApi/login', {
      json: { email, password: 'a brand new password' },
    });
    expect(plain.body.data.token).to.match(/^pat_/);
    expect((await client(running.url).get('/adminApi/session', { token: sessionToken })).status, 'their sessions ended').to.equal(401);
  });

  it('records the changes of the command line in the audit log with the actor "cli", and exports it as JSON lines', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const email = 'audited@example.com';
    const created = await runProcess('scripts/admin.ts', ['operator:create', '--email', email, '--password', 'an audited password'], env());
    expect(created.code, created.stderr).to.equal(0);
    // Refused: no change, no entry.
    const weak = await runProcess(
      'scripts/admin.ts',
      ['operator:create', '--email', 'weak2@example.com', '--password', 'password1234'],
      env(),
    );
    expect(weak.code).to.equal(2);
    const reset = await runProcess('scripts/admin.ts', ['operator:reset-password', '--email', email], env());
    expect(reset.code, reset.stderr).to.equal(0);
    const exported = await runProcess('scripts/admin.ts', ['audit:export', '--since', since], env());
    expect(exported.code, exported.stderr).to.equal(0);
    const entries = exported.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { actor: string; action: string; changed: string[]; operator: unknown });
    expect(entries.map((e) => [e.actor, e.action, e.changed, e.operator])).to.deep.equal([
      ['cli', 'password_reset.create', [], null],
      ['cli', 'operator.create', ['email', 'password'], null],
    ]);
    expect(exported.stdout).to.not.contain('an audited password');
  });

  it('stops at start with a message naming a wrong configuration value', async () => {
    const result = await runProcess('src/main.ts', [], { ...env(), PORT: 'eighty', PALAVER_RETRY_SCHEDULE: 'x' });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain('Invalid configuration');
    expect(result.stderr).to.contain('PORT');
    expect(result.stderr).to.contain('PALAVER_RETRY_SCHEDULE');
  });

  if (mode === 'embedded') {
    it('refuses to open an embedded data directory that a running server holds', async () => {
      running = await startProcess(env());
      const second = await runProcess('src/main.ts', [], env());
      expect(second.code).to.equal(1);
      expect(second.stdout + second.stderr).to.contain('is in use by process');
      expect((await client(running.url).get('/readyz')).status, 'the first one still serves').to.equal(200);
    });

    it('has the admin CLI refuse, in one line and with exit code 2, a data directory a running server holds', async () => {
      running = await startProcess(env());
      const cli = await runProcess('scripts/admin.ts', ['account:show', '--account', '1'], env());
      expect(cli.code, cli.stderr).to.equal(2);
      expect(cli.stderr.trim().split('\n'), 'one line, no stack').to.have.length(1);
      expect(cli.stderr).to.match(/^error: the data directory .+ is in use by process \d+; stop the server first, or use the Admin API\n$/);
      expect(cli.stdout).to.equal('');
    });
  }

  it('sets up accounts and Services from the command line (npm run admin)', async () => {
    const account = await runProcess('scripts/admin.ts', ['account:create', '--name', 'Scripted'], env());
    expect(account.code, account.stderr).to.equal(0);
    const { id } = JSON.parse(account.stdout) as { id: number };

    const service = await runProcess(
      'scripts/admin.ts',
      ['service:create', '--account', String(id), '--name', 'Bot', '--webhook-url', 'https://bot.example.com/in'],
      env(),
    );
    expect(service.code, service.stderr).to.equal(0);
    const created = JSON.parse(service.stdout) as { isDefault: boolean; apiKey: string; signingSecret: string };
    expect(created.isDefault).to.equal(true);
    expect(created.apiKey).to.match(/^pk_/);
    expect(created.signingSecret).to.match(/^whsec_/);

    const operator = await runProcess(
      'scripts/admin.ts',
      ['operator:create', '--email', 'ops@example.com', '--password', 'long enough password', '--grant', `accounts:read@${id}`],
      env(),
    );
    expect(operator.code, operator.stderr).to.equal(0);

    const serviceId = String((JSON.parse(service.stdout) as { id: number }).id);
    const key = await runProcess('scripts/admin.ts', ['key:create', '--service', serviceId], env());
    expect(key.code, key.stderr).to.equal(0);
    expect((JSON.parse(key.stdout) as { apiKey: string }).apiKey).to.match(/^pk_/);
    // key:list shows what key:revoke takes: ids, with the prefixes the keys start with.
    const listed = await runProcess('scripts/admin.ts', ['key:list', '--service', serviceId], env());
    expect(listed.code, listed.stderr).to.equal(0);
    const keys = JSON.parse(listed.stdout) as Array<{ id: number; prefix: string; createdAt: string; revokedAt: string | null }>;
    expect(keys.map((k) => k.prefix)).to.deep.equal([
      created.apiKey.slice(0, 10),
      (JSON.parse(key.stdout) as { apiKey: string }).apiKey.slice(0, 10),
    ]);
    expect(keys.every((k) => !Number.isNaN(Date.parse(k.createdAt)) && k.revokedAt === null)).to.equal(true);
    const revoked = await runProcess('scripts/admin.ts', ['key:revoke', '--service', serviceId, '--key', String(keys[0]?.id)], env());
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(JSON.parse(revoked.stdout)).to.include({ id: keys[0]?.id, prefix: keys[0]?.prefix });
    const disabled = await runProcess('scripts/admin.ts', ['service:update', '--service', serviceId, '--disable'], env());
    expect(disabled.code, disabled.stderr).to.equal(0);
    expect(JSON.parse(disabled.stdout)).to.include({ enabled: false, disabledReason: 'operator' });

    const bad = await runProcess('scripts/admin.ts', ['service:create', '--account', 'x', '--name', ''], env());
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('--account').and.to.contain('--name');

    // What the CLI wrote is what the server serves, to the operator it created.
    running = await startProcess(env());
    const api = client(running.url);
    const login = await api.post<{ token: string }>('/adminApi/login', {
      json: { email: 'ops@example.com', password: 'long enough password' },
    });
    const shown = await api.get<{ name: string; defaultService: { name: string } }>(`/adminApi/accounts/${id}`, {
      token: login.body.data.token,
    });
    expect(shown.status).to.equal(200);
    expect(shown.body.data.name).to.equal('Scripted');
    expect(shown.body.data.defaultService.name).to.equal('Bot');
    expect((shown.body.data as unknown as { services: Array<{ enabled: boolean }> }).services[0]?.enabled).to.equal(false);
  });
});

/** A port nothing listens on now, for a process that must come back on the same one. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

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

/** The first start's demo banner: operator email and password, account id and identification. */
async function demoBanner(running: ServerProcess): Promise<RegExpExecArray> {
  const banner = /operator (\S+) \/ (\S+)\n\s+Account\s+id (\d+), identification (\w+)/;
  // Printed after the "listening" line that startProcess waits for, so perhaps in a later chunk.
  for (let i = 0; i < 600 && !banner.test(running.output()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  const found = banner.exec(running.output());
  expect(found, running.output()).to.not.equal(null);
  return found as RegExpExecArray;
}
