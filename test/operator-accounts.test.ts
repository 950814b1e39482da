// Operator accounts: password strength, change and reset, hashes made again at sign-in, two-factor
// sign-in with TOTP (codes computed here from the enrolment secret with the server's library),
// recovery codes, sessions, and the per-account rule that requires a second factor.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Secret, TOTP } from 'otpauth';
import { hashPassword } from '../src/security/passwords.ts';
import { adminToken } from './support/factories.ts';
import { client, type Client } from './support/http.ts';
import { sharedServer, startTestServer, type TestServer } from './support/server.ts';

type Grant = { permission: string; accountId: number | null };

/** The code of the time step `steps` from now, as an authenticator app would show it. */
function codeFor(secret: string, steps = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: Date.now() + steps * 30_000,
  });
}

function helpers(server: () => TestServer) {
  const api = (): Client => client(server().url);
  const fresh = (name: string) => `${name}-${randomBytes(6).toString('hex')}@palaver.test`;

  async function newOperator(grants: Grant[] = [], password = 'a long enough password') {
    const email = fresh('account');
    const created = await api().post<{ id: number }>('/adminApi/operators', {
      token: await adminToken(server().url),
      json: { email, password, grants },
    });
    expect(created.status, created.text).to.equal(201);
    return { id: created.body.data.id, email, password };
  }

  async function signIn(email: string, password: string, userAgent = 'test agent') {
    const answer = await api().post<{ token: string }>('/adminApi/login', {
      json: { email, password },
      headers: { 'user-agent': userAgent },
    });
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body.data.token, 'a session at once, without two factors').to.be.a('string');
    return answer.body.data.token;
  }

  /** Enrols the signed-in operator; the secret and the recovery codes. */
  async function enrol(token: string) {
    const started = await api().post<{ secret: string; otpauthUrl: string }>('/adminApi/me/two-factor', { token });
    expect(started.status, started.text).to.equal(201);
    const confirmed = await api().post<{ recoveryCodes: string[] }>('/adminApi/me/two-factor/confirm', {
      token,
      json: { code: codeFor(started.body.data.secret) },
    });
    expect(confirmed.status, confirmed.text).to.equal(200);
    return { ...started.body.data, recoveryCodes: confirmed.body.data.recoveryCodes };
  }

  return { api, fresh, newOperator, signIn, enrol };
}

describe('Operator accounts: passwords', () => {
  const { api, newOperator, signIn, fresh } = helpers(sharedServer);

  it('refuses a short or a common new password with 422 naming the field', async () => {
    const token = await adminToken();
    const short = await api().post('/adminApi/operators', { token, json: { email: fresh('short'), password: 'eleven char', grants: [] } });
    expect(short.status).to.equal(422);
    expect(short.body.notifications).to.deep.equal([
      { type: 'error', message: 'validation_failed', field: 'body.password', detail: 'must be at least 12 characters' },
    ]);
    const common = await api().post('/adminApi/operators', {
      token,
      json: { email: fresh('common'), password: 'Qwerty123456', grants: [] },
    });
    expect(common.status).to.equal(422);
    expect(common.body.notifications).to.deep.equal([
      {
        type: 'error',
        message: 'validation_failed',
        field: 'body.password',
        detail: 'is one of the most common passwords; choose another',
      },
    ]);
  });

  it('changes the password with the current one, and ends every other session of the operator', async () => {
    const operator = await newOperator();
    const kept = await signIn(operator.email, operator.password);
    const other = await signIn(operator.email, operator.password);

    const wrong = await api().put('/adminApi/me/password', {
      token: kept,
      json: { currentPassword: 'not the password', newPassword: 'the new password, long' },
    });
    expect(wrong.status).to.equal(403);
    expect(wrong.body.notifications[0]?.message).to.equal('wrong_password');
    const weak = await api().put('/adminApi/me/password', {
      token: kept,
      json: { currentPassword: operator.password, newPassword: 'iloveyou' },
    });
    expect(weak.status).to.equal(422);
    expect(weak.body.notifications.map((n) => n.field)).to.deep.equal(['body.newPassword']);
    expect((await api().get('/adminApi/session', { token: other })).status, 'nothing changed yet').to.equal(200);

    const changed = await api().put('/adminApi/me/password', {
      token: kept,
      json: { currentPassword: operator.password, newPassword: 'the new password, long' },
    });
    expect(changed.status, changed.text).to.equal(200);
    expect((await api().get('/adminApi/session', { token: kept })).status, 'this session goes on').to.equal(200);
    expect((await api().get('/adminApi/session', { token: other })).status, 'the other one ended').to.equal(401);
    const old = await api().post('/adminApi/login', { json: { email: operator.email, password: operator.password } });
    expect(old.status).to.equal(401);
    await signIn(operator.email, 'the new password, long');
  });

  it('resets a password with a one-time link made by an operator who manages operators', async () => {
    const manager = await newOperator([{ permission: 'operators:manage', accountId: null }]);
    const managerToken = await signIn(manager.email, manager.password);
    const target = await newOperator();
    const targetToken = await signIn(target.email, target.password);

    const made = await api().post<{ url: string; expiresAt: string }>(`/adminApi/operators/${target.id}/password-reset`, {
      token: managerToken,
    });
    expect(made.status, made.text).to.equal(201);
    expect(made.body.data.url).to.match(new RegExp(`^${sharedServer().url}/dashboard#/reset-password/prt_[\\w-]{43}$`));
    const expiresIn = Date.parse(made.body.data.expiresAt) - Date.now();
    expect(expiresIn).to.be.within(86_000_000, 86_400_000);
    const token = made.body.data.url.split('/').pop() ?? '';
    expect((await api().get('/adminApi/session', { token: targetToken })).status, 'a link alone ends nothing').to.equal(200);

    // Stored hashed: the token itself is nowhere in the database.
    const rows = await sharedServer()
      .deps.db.orm.em.fork()
      .getConnection()
      .execute<Array<{ token_hash: string }>>('select token_hash from operator_password_resets where operator_id = ?', [target.id]);
    expect(rows).to.have.length(1);
    expect(rows[0]?.token_hash).to.match(/^[0-9a-f]{64}$/);

    const weak = await api().post('/adminApi/password-reset', { json: { token, password: 'short' } });
    expect(weak.status).to.equal(422);
    const used = await api().post('/adminApi/password-reset', { json: { token, password: 'reset to this password' } });
    expect(used.status, used.text).to.equal(200);
    expect((await api().get('/adminApi/session', { token: targetToken })).status, 'every session ends').to.equal(401);
    const again = await api().post('/adminApi/password-reset', { json: { token, password: 'and once more, please' } });
    expect(again.status).to.equal(400);
    expect(again.body.notifications[0]?.message).to.equal('invalid_reset_token');
    await signIn(target.email, 'reset to this password');

    // A newer link replaces an unused one; an expired one is refused.
    const first = await api().post<{ url: string }>(`/adminApi/operators/${target.id}/password-reset`, { token: managerToken });
    const second = await api().post<{ url: string }>(`/adminApi/operators/${target.id}/password-reset`, { token: managerToken });
    const replaced = await api().post('/adminApi/password-reset', {
      json: { token: first.body.data.url.split('/').pop(), password: 'never set like this' },
    });
    expect(replaced.status).to.equal(400);
    await sharedServer()
      .deps.db.orm.em.fork()
      .getConnection()
      .execute("update operator_password_resets set expires_at = now() - interval '1 second' where operator_id = ?", [target.id]);
    const expired = await api().post('/adminApi/password-reset', {
      json: { token: second.body.data.url.split('/').pop(), password: 'never set like this' },
    });
    expect(expired.status).to.equal(400);
    expect((await api().post(`/adminApi/operators/2147483000/password-reset`, { token: managerToken })).status).to.equal(404);
  });

  it('makes a hash again at sign-in when it was made with another cost', async () => {
    const operator = await newOperator();
    const em = sharedServer().deps.db.orm.em.fork();
    const older = await hashPassword(operator.password, 11);
    await em.getConnection().execute('update operators set password_hash = ? where id = ?', [older, operator.id]);
    await signIn(operator.email, operator.password);
    const [row] = await em
      .getConnection()
      .execute<Array<{ password_hash: string }>>('select password_hash from operators where id = ?', [operator.id]);
    const cost = sharedServer().config.security.passwordHashCost;
    expect(row?.password_hash.split('$').slice(0, 4)).to.deep.equal(['scrypt', String(2 ** cost), '8', '1']);
    expect(row?.password_hash).to.not.equal(older);
    await signIn(operator.email, operator.password);
  });
});

describe('Operator accounts: sessions', () => {
  const { api, newOperator, signIn } = helpers(sharedServer);

  it('lists one’s sessions with their address and user agent, and ends any of them', async () => {
    const operator = await newOperator();
    const first = await signIn(operator.email, operator.password, 'Browser One');
    const second = await signIn(operator.email, operator.password, 'Browser Two');
    const listed = await api().get<
      Array<{ id: number; userAgent: string; address: string; current: boolean; createdAt: string; lastUsedAt: string }>
    >('/adminApi/me/sessions', { token: first });
    expect(listed.status).to.equal(200);
    expect(listed.body.data.map((s) => [s.userAgent, s.current])).to.deep.equal([
      ['Browser Two', false],
      ['Browser One', true],
    ]);
    for (const s of listed.body.data) {
      expect(s.address).to.match(/127\.0\.0\.1/);
      expect(Date.parse(s.createdAt)).to.not.be.NaN;
      expect(Date.parse(s.lastUsedAt)).to.not.be.NaN;
    }
    const ended = await api().delete(`/adminApi/me/sessions/${listed.body.data[0]?.id}`, { token: first });
    expect(ended.status).to.equal(200);
    expect((await api().get('/adminApi/session', { token: second })).status).to.equal(401);
    expect((await api().get('/adminApi/session', { token: first })).status).to.equal(200);

    // Another operator's session is not one's own to end.
    const stranger = await newOperator();
    const strangerToken = await signIn(stranger.email, stranger.password);
    const theirs = await api().get<Array<{ id: number }>>('/adminApi/me/sessions', { token: strangerToken });
    const refused = await api().delete(`/adminApi/me/sessions/${theirs.body.data[0]?.id}`, { token: first });
    expect(refused.status).to.equal(404);
    expect(refused.body.notifications[0]?.message).to.equal('session_not_found');
    expect((await api().get('/adminApi/session', { token: strangerToken })).status).to.equal(200);
  });

  it('lets an operator who manages operators see and end another’s sessions', async () => {
    const manager = await newOperator([{ permission: 'operators:manage', accountId: null }]);
    const managerToken = await signIn(manager.email, manager.password);
    const target = await newOperator();
    const tokens = [await signIn(target.email, target.password), await signIn(target.email, target.password)];
    const listed = await api().get<Array<{ id: number; current: boolean }>>(`/adminApi/operators/${target.id}/sessions`, {
      token: managerToken,
    });
    expect(listed.status).to.equal(200);
    expect(listed.body.data).to.have.length(2);
    expect(listed.body.data.every((s) => !s.current)).to.equal(true);

    const one = await api().delete(`/adminApi/operators/${target.id}/sessions/${listed.body.data[0]?.id}`, { token: managerToken });
    expect(one.status).to.equal(200);
    expect((await api().get('/adminApi/session', { token: tokens[1] })).status).to.equal(401);
    expect((await api().get('/adminApi/session', { token: tokens[0] })).status).to.equal(200);
    const all = await api().delete<{ ended: number }>(`/adminApi/operators/${target.id}/sessions`, { token: managerToken });
    expect(all.body.data).to.deep.equal({ ended: 1 });
    expect((await api().get('/adminApi/session', { token: tokens[0] })).status).to.equal(401);
    expect((await api().get('/adminApi/session', { token: managerToken })).status).to.equal(200);
  });
});

describe('Operator accounts: two-factor sign-in', () => {
  const { api, newOperator, signIn, enrol } = helpers(sharedServer);

  it('enrols with a code, then asks for a code after the password; codes and recovery codes are good once', async () => {
    const operator = await newOperator();
    const token = await signIn(operator.email, operator.password);
    const elsewhere = await signIn(operator.email, operator.password);

    const started = await api().post<{ secret: string; otpauthUrl: string }>('/adminApi/me/two-factor', { token });
    expect(started.status).to.equal(201);
    expect(started.body.data.secret).to.match(/^[A-Z2-7]{32}$/);
    const url = new URL(started.body.data.otpauthUrl);
    expect(url.protocol).to.equal('otpauth:');
    expect(url.host).to.equal('totp');
    expect(decodeURIComponent(url.pathname)).to.equal(`/Palaver:${operator.email}`);
    expect(url.searchParams.get('secret')).to.equal(started.body.data.secret);
    expect(url.searchParams.get('issuer')).to.equal('Palaver');

    const wrong = await api().post('/adminApi/me/two-factor/confirm', { token, json: { code: codeFor(started.body.data.secret, 5) } });
    expect(wrong.status).to.equal(403);
    expect(wrong.body.notifications[0]?.message).to.equal('invalid_code');
    const confirmCode = codeFor(started.body.data.secret);
    const confirmed = await api().post<{ recoveryCodes: string[] }>('/adminApi/me/two-factor/confirm', {
      token,
      json: { code: confirmCode },
    });
    expect(confirmed.status, confirmed.text).to.equal(200);
    const codes = confirmed.body.data.recoveryCodes;
    expect(codes).to.have.length(10);
    expect(new Set(codes).size).to.equal(10);
    for (const code of codes) expect(code).to.match(/^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$/);
    expect((await api().get('/adminApi/session', { token: elsewhere })).status, 'password-only sessions end').to.equal(401);
    const session = await api().get<{ twoFactor: unknown }>('/adminApi/session', { token });
    expect(session.body.data.twoFactor).to.deep.equal({ enabled: true, requiredBy: [], recoveryCodesLeft: 10 });
    expect((await api().post('/adminApi/me/two-factor', { token })).status, 'already on').to.equal(409);

    // The password alone: a challenge, no session.
    const first = await api().post<{ token?: string; twoFactorRequired: boolean; challenge: string; challengeExpiresAt: string }>(
      '/adminApi/login',
      { json: { email: operator.email, password: operator.password } },
    );
    expect(first.status).to.equal(200);
    expect(first.body.data.token).to.equal(undefined);
    expect(first.body.data.twoFactorRequired).to.equal(true);
    expect(first.body.data.challenge).to.match(/^ptc_/);
    expect((await api().get('/adminApi/session', { token: first.body.data.challenge })).status, 'a challenge is no token').to.equal(401);
    const challenge = first.body.data.challenge;
    const step = (code: string) => api().post<{ token: string }>('/adminApi/login/two-factor', { json: { challenge, code } });

    const bad = await step('000000' === confirmCode ? '111111' : '000000');
    expect(bad.status).to.equal(401);
    expect(bad.body.notifications[0]?.message).to.equal('invalid_code');
    const replayed = await step(confirmCode);
    expect(replayed.status, 'the code that confirmed the enrolment is used').to.equal(401);
    const good = await step(codeFor(started.body.data.secret, 1));
    expect(good.status, good.text).to.equal(200);
    expect(good.body.data.token).to.match(/^pat_/);
    expect((await api().get('/adminApi/session', { token: good.body.data.token })).status).to.equal(200);
    const usedUp = await step(codeFor(started.body.data.secret, 1));
    expect(usedUp.status).to.equal(401);
    expect(usedUp.body.notifications[0]?.message).to.equal('invalid_challenge');

    // A recovery code instead of the authenticator, typed in capitals and without dashes: once.
    const recovery = codes[0] ?? '';
    const viaRecovery = async () => {
      const login = await api().post<{ challenge: string }>('/adminApi/login', {
        json: { email: operator.email, password: operator.password },
      });
      return api().post<{ token: string }>('/adminApi/login/two-factor', {
        json: { challenge: login.body.data.challenge, code: recovery.replaceAll('-', '').toUpperCase() },
      });
    };
    expect((await viaRecovery()).status).to.equal(200);
    expect((await viaRecovery()).status, 'a recovery code is good once').to.equal(401);
    const left = await api().get<{ twoFactor: { recoveryCodesLeft: number } }>('/adminApi/session', { token });
    expect(left.body.data.twoFactor.recoveryCodesLeft).to.equal(9);

    // Stored hashed: no recovery code and no challenge in the database as it was shown.
    const rows = await sharedServer()
      .deps.db.orm.em.fork()
      .getConnection()
      .execute<Array<{ code_hash: string }>>('select code_hash from operator_recovery_codes where operator_id = ?', [operator.id]);
    expect(rows).to.have.length(10);
    expect(rows.map((r) => r.code_hash)).to.not.include.members(codes);

    // New recovery codes for a code; then off with a recovery code: the password alone signs in again.
    const renewed = await api().post<{ recoveryCodes: string[] }>('/adminApi/me/two-factor/recovery-codes', {
      token,
      json: { code: codes[1] },
    });
    expect(renewed.status, renewed.text).to.equal(200);
    expect(renewed.body.data.recoveryCodes).to.have.length(10);
    const offWithOld = await api().post('/adminApi/me/two-factor/disable', { token, json: { code: codes[2] } });
    expect(offWithOld.status, 'the old recovery codes stopped working').to.equal(403);
    const off = await api().post('/adminApi/me/two-factor/disable', { token, json: { code: renewed.body.data.recoveryCodes[0] } });
    expect(off.status, off.text).to.equal(200);
    await signIn(operator.email, operator.password);
    expect((await api().post('/adminApi/me/two-factor/disable', { token, json: { code: '123456' } })).status).to.equal(409);
  });

  it('refuses a challenge after the password was reset or the operator disabled', async () => {
    const operator = await newOperator();
    const { secret } = await enrol(await signIn(operator.email, operator.password));
    const login = await api().post<{ challenge: string }>('/adminApi/login', {
      json: { email: operator.email, password: operator.password },
    });
    const admin = await adminToken();
    expect((await api().put(`/adminApi/operators/${operator.id}/disabled`, { token: admin, json: { disabled: true } })).status).to.equal(
      200,
    );
    const step = await api().post('/adminApi/login/two-factor', {
      json: { challenge: login.body.data.challenge, code: codeFor(secret, 1) },
    });
    expect(step.status).to.equal(401);
    expect(step.body.notifications[0]?.message).to.equal('invalid_challenge');
  });
});

describe('Operator accounts: two factors required by an account, and their rate limit', function () {
  this.timeout(120_000);
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ admin: { twoFactorRateLimit: { points: 3, durationSeconds: 900 } } });
  });
  after(async () => {
    await server.stop();
  });
  const { api, newOperator, signIn, enrol } = helpers(() => server);

  it('withholds the grants on such an account until the operator enrols, in the same session', async () => {
    const admin = await adminToken(server.url);
    const newAccount = async (name: string) => {
      const created = await api().post<{ id: number }>('/adminApi/accounts', { token: admin, json: { name } });
      expect(created.status, created.text).to.equal(201);
      return created.body.data;
    };
    const strict = await newAccount('Strict');
    const relaxed = await newAccount('Relaxed');
    const editor = await newOperator([{ permission: 'accounts:edit', accountId: strict.id }]);
    const editorToken = await signIn(editor.email, editor.password);
    const unenrolled = await api().patch(`/adminApi/accounts/${strict.id}`, { token: editorToken, json: { requireTwoFactor: true } });
    expect(unenrolled.status, 'it would lock the editor out').to.equal(409);
    expect(unenrolled.body.notifications[0]?.message).to.equal('two_factor_not_enabled');
    await enrol(editorToken);
    const reader = await newOperator([
      { permission: 'accounts:read', accountId: strict.id },
      { permission: 'accounts:read', accountId: relaxed.id },
    ]);
    const set = await api().patch<{ requireTwoFactor: boolean }>(`/adminApi/accounts/${strict.id}`, {
      token: editorToken,
      json: { requireTwoFactor: true },
    });
    expect(set.status, set.text).to.equal(200);
    expect(set.body.data.requireTwoFactor).to.equal(true);

    const readerToken = await signIn(reader.email, reader.password);
    const session = await api().get<{ grants: Grant[]; twoFactor: unknown }>('/adminApi/session', { token: readerToken });
    expect(session.body.data.grants).to.deep.equal([{ permission: 'accounts:read', accountId: relaxed.id }]);
    expect(session.body.data.twoFactor).to.deep.equal({ enabled: false, requiredBy: [strict.id], recoveryCodesLeft: 0 });
    expect((await api().get(`/adminApi/accounts/${strict.id}`, { token: readerToken })).status).to.equal(403);
    expect((await api().get(`/adminApi/accounts/${relaxed.id}`, { token: readerToken })).status).to.equal(200);
    const listed = await api().get<Array<{ id: number }>>('/adminApi/accounts', { token: readerToken });
    expect(listed.body.data.map((a) => a.id)).to.deep.equal([relaxed.id]);

    // A grant on every account covers the strict one: withheld whole, self-service still works.
    const everywhere = await api().get<{ grants: Grant[]; twoFactor: { requiredBy: number[] } }>('/adminApi/session', { token: admin });
    expect(everywhere.body.data.grants).to.deep.equal([]);
    expect(everywhere.body.data.twoFactor.requiredBy).to.include(strict.id);
    expect((await api().get(`/adminApi/accounts/${relaxed.id}`, { token: admin })).status).to.equal(403);

    await enrol(readerToken);
    expect((await api().get(`/adminApi/accounts/${strict.id}`, { token: readerToken })).status, 'enrolled: granted').to.equal(200);

    // Back to normal for the rest of this server: the editor lifts the rule.
    const lifted = await api().patch(`/adminApi/accounts/${strict.id}`, { token: editorToken, json: { requireTwoFactor: false } });
    expect(lifted.status).to.equal(200);
    expect((await api().get(`/adminApi/accounts/${relaxed.id}`, { token: admin })).status).to.equal(200);
  });

  it('limits two-factor codes per operator like passwords, the right code included', async () => {
    const operator = await newOperator();
    const { secret } = await enrol(await signIn(operator.email, operator.password));
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const login = await api().post<{ challenge: string }>('/adminApi/login', {
        json: { email: operator.email, password: operator.password },
      });
      const code = i < 3 ? '000000' : codeFor(secret, 1);
      statuses.push((await api().post('/adminApi/login/two-factor', { json: { challenge: login.body.data.challenge, code } })).status);
    }
    // The enrolment's confirmation took one of the three points.
    expect(statuses).to.deep.equal([401, 401, 429, 429]);
  });
});
