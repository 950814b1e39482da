// The admin command line (`npm run admin`, scripts/admin.ts) as an operator runs it: one process
// per command on the configured database, then the server (src/main.ts) serving what it wrote.
import { expect } from 'chai';
import { Secret, TOTP } from 'otpauth';
import { mode } from './support/database.ts';
import { client } from './support/http.ts';
import { processFixture } from './support/process.ts';

describe('the admin command line', function () {
  // One process per command, each a second or two of CPU.
  this.timeout(300_000);
  const proc = processFixture('cli');

  it('makes a one-time password-reset link, and turns two-factor sign-in off, from the command line (npm run admin)', async () => {
    const email = 'forgot@example.com';
    const created = await proc.run('scripts/admin.ts', ['operator:create', '--email', email, '--password', 'the old password']);
    expect(created.code, created.stderr).to.equal(0);
    const weak = await proc.run('scripts/admin.ts', ['operator:create', '--email', 'weak@example.com', '--password', 'password1234']);
    expect(weak.code).to.equal(2);
    expect(weak.stderr).to.contain('--password: is one of the most common passwords');

    const reset = await proc.run('scripts/admin.ts', ['operator:reset-password', '--email', email.toUpperCase()]);
    expect(reset.code, reset.stderr).to.equal(0);
    const printed = JSON.parse(reset.stdout) as { operator: string; url: string; expiresAt: string };
    expect(printed.operator).to.equal(email);
    expect(printed.url).to.match(/^http:\/\/localhost:\d+\/dashboard#\/reset-password\/prt_[\w-]{43}$/);
    expect(Date.parse(printed.expiresAt)).to.be.greaterThan(Date.now());
    const unknown = await proc.run('scripts/admin.ts', ['operator:reset-password', '--email', 'nobody@example.com']);
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.contain('no operator has the email nobody@example.com');

    let running = await proc.start();
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
    const off = await proc.run('scripts/admin.ts', ['operator:two-factor-off', '--email', email]);
    expect(off.code, off.stderr).to.equal(0);
    expect(JSON.parse(off.stdout)).to.deep.equal({ operator: email, twoFactorEnabled: false });
    running = await proc.start();
    const plain = await client(running.url).post<{ token: string }>('/adminApi/login', {
      json: { email, password: 'a brand new password' },
    });
    expect(plain.body.data.token).to.match(/^pat_/);
    expect((await client(running.url).get('/adminApi/session', { token: sessionToken })).status, 'their sessions ended').to.equal(401);
  });

  it('records the changes of the command line in the audit log with the actor "cli", and exports it as JSON lines', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const email = 'audited@example.com';
    const created = await proc.run('scripts/admin.ts', ['operator:create', '--email', email, '--password', 'an audited password']);
    expect(created.code, created.stderr).to.equal(0);
    // Refused: no change, no entry.
    const weak = await proc.run('scripts/admin.ts', ['operator:create', '--email', 'weak2@example.com', '--password', 'password1234']);
    expect(weak.code).to.equal(2);
    const reset = await proc.run('scripts/admin.ts', ['operator:reset-password', '--email', email]);
    expect(reset.code, reset.stderr).to.equal(0);
    const exported = await proc.run('scripts/admin.ts', ['audit:export', '--since', since]);
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

  if (mode === 'embedded') {
    it('has the admin CLI refuse, in one line and with exit code 2, a data directory a running server holds', async () => {
      const running = await proc.start();
      const cli = await proc.run('scripts/admin.ts', ['account:show', '--account', '1']);
      expect(cli.code, cli.stderr).to.equal(2);
      expect(cli.stderr.trim().split('\n'), 'one line, no stack').to.have.length(1);
      expect(cli.stderr).to.match(/^error: the data directory .+ is in use by process \d+; stop the server first, or use the Admin API\n$/);
      expect(cli.stderr, 'the server that holds it').to.contain(`in use by process ${running.child.pid};`);
      expect(cli.stdout).to.equal('');
    });
  }

  it('sets up accounts and Services from the command line (npm run admin)', async () => {
    const account = await proc.run('scripts/admin.ts', ['account:create', '--name', 'Scripted']);
    expect(account.code, account.stderr).to.equal(0);
    const { id } = JSON.parse(account.stdout) as { id: number };

    const service = await proc.run('scripts/admin.ts', [
      'service:create',
      '--account',
      String(id),
      '--name',
      'Bot',
      '--webhook-url',
      'https://bot.example.com/in',
    ]);
    expect(service.code, service.stderr).to.equal(0);
    const created = JSON.parse(service.stdout) as { isDefault: boolean; apiKey: string; signingSecret: string };
    expect(created.isDefault).to.equal(true);
    expect(created.apiKey).to.match(/^pk_/);
    expect(created.signingSecret).to.match(/^whsec_/);

    const operator = await proc.run('scripts/admin.ts', [
      'operator:create',
      '--email',
      'ops@example.com',
      '--password',
      'long enough password',
      '--grant',
      `accounts:read@${id}`,
    ]);
    expect(operator.code, operator.stderr).to.equal(0);

    const serviceId = String((JSON.parse(service.stdout) as { id: number }).id);
    const key = await proc.run('scripts/admin.ts', ['key:create', '--service', serviceId]);
    expect(key.code, key.stderr).to.equal(0);
    expect((JSON.parse(key.stdout) as { apiKey: string }).apiKey).to.match(/^pk_/);
    // key:list shows what key:revoke takes: ids, with the prefixes the keys start with.
    const listed = await proc.run('scripts/admin.ts', ['key:list', '--service', serviceId]);
    expect(listed.code, listed.stderr).to.equal(0);
    const keys = JSON.parse(listed.stdout) as Array<{ id: number; prefix: string; createdAt: string; revokedAt: string | null }>;
    expect(keys.map((k) => k.prefix)).to.deep.equal([
      created.apiKey.slice(0, 10),
      (JSON.parse(key.stdout) as { apiKey: string }).apiKey.slice(0, 10),
    ]);
    expect(keys.every((k) => !Number.isNaN(Date.parse(k.createdAt)) && k.revokedAt === null)).to.equal(true);
    const revoked = await proc.run('scripts/admin.ts', ['key:revoke', '--service', serviceId, '--key', String(keys[0]?.id)]);
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(JSON.parse(revoked.stdout)).to.include({ id: keys[0]?.id, prefix: keys[0]?.prefix });
    const disabled = await proc.run('scripts/admin.ts', ['service:update', '--service', serviceId, '--disable']);
    expect(disabled.code, disabled.stderr).to.equal(0);
    expect(JSON.parse(disabled.stdout)).to.include({ enabled: false, disabledReason: 'operator' });

    const bad = await proc.run('scripts/admin.ts', ['service:create', '--account', 'x', '--name', '']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('--account').and.to.contain('--name');

    // What the CLI wrote is what the server serves, to the operator it created.
    const running = await proc.start();
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
