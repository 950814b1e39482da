// Single sign-on with OpenID Connect, end to end against a real provider on loopback
// (test/support/oidc-provider.ts): the code flow with PKCE, operators matched by verified email,
// created only with configured grants, refusals back on the sign-in page, and password sign-in
// turned off.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Secret, TOTP } from 'otpauth';
import { client } from './support/http.ts';
import { signInThroughProvider } from './support/oidc-provider.ts';
import { startSsoServer, type SsoSetup } from './support/sso.ts';
import { createAccount } from '../src/tenancy/accounts.ts';
import { sharedServer, TEST_ADMIN, type TestServer } from './support/server.ts';

const email = (prefix = 'sso') => `${prefix}-${randomBytes(5).toString('hex')}@Palaver.Test`;

type Setup = SsoSetup;
const setup = startSsoServer;
const teardown = (s: Setup | undefined) => s?.stop();

async function adminTokenOf(server: TestServer): Promise<string> {
  const login = await client(server.url).post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN });
  expect(login.status, login.text).to.equal(200);
  return login.body.data.token;
}

async function exchange(server: TestServer, code: string) {
  return client(server.url).post<{ token: string; expiresAt: string }>('/adminApi/sso/exchange', { json: { code } });
}

describe('Single sign-on (OpenID Connect)', function () {
  this.timeout(60_000);

  describe('matching existing operators', () => {
    let s: Setup;
    before(async () => {
      s = await setup();
    });
    after(() => teardown(s));

    it('tells the sign-in page that SSO is on, under its name, beside passwords', async () => {
      const options = await client(s.server.url).get('/adminApi/login');
      expect(options.status, options.text).to.equal(200);
      expect(options.body.data).to.deep.equal({ password: true, sso: { name: 'Loopback ID', startUrl: '/adminApi/sso/start' } });
    });

    it('signs a known operator in by their verified email, whatever its case, through a one-time code', async () => {
      const address = email();
      const token = await adminTokenOf(s.server);
      const created = await client(s.server.url).post<{ id: number }>('/adminApi/operators', {
        token,
        json: { email: address.toLowerCase(), password: 'a long password', grants: [{ permission: 'accounts:read', accountId: null }] },
      });
      expect(created.status, created.text).to.equal(201);

      const run = await signInThroughProvider(s.server.url, address.toUpperCase());
      expect(run.landing.origin + run.landing.pathname).to.equal(`${s.server.url}/dashboard`);
      expect(run.landing.search, 'nothing in the query, which access logs keep').to.equal('');
      const code = run.fragment.get('sso-code') ?? '';
      expect(code, run.landing.href).to.match(/^ssc_/);

      // The code is no bearer token.
      const asToken = await client(s.server.url).get('/adminApi/session', { token: code });
      expect(asToken.status).to.equal(401);

      const session = await exchange(s.server, code);
      expect(session.status, session.text).to.equal(200);
      expect(session.body.data.token).to.match(/^pat_/);
      const me = await client(s.server.url).get<{ id: number; email: string }>('/adminApi/session', { token: session.body.data.token });
      expect(me.status, me.text).to.equal(200);
      expect(me.body.data.id).to.equal(created.body.data.id);
      expect(me.body.data.email).to.equal(address.toLowerCase());

      // Once only.
      const again = await exchange(s.server, code);
      expect(again.status).to.equal(400);
      expect(again.body.notifications[0]?.message).to.equal('sso_code_invalid');
    });

    it('still asks an operator with two-factor sign-in for the code: the exchange gives a challenge, not a token', async () => {
      const address = email('totp');
      const password = 'a long enough password';
      const token = await adminTokenOf(s.server);
      const created = await client(s.server.url).post<{ id: number }>('/adminApi/operators', {
        token,
        json: { email: address.toLowerCase(), password, grants: [{ permission: 'accounts:read', accountId: null }] },
      });
      expect(created.status, created.text).to.equal(201);
      const own = await client(s.server.url).post<{ token: string }>('/adminApi/login', { json: { email: address, password } });
      const codeAt = (secret: string, steps = 0) =>
        new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
          timestamp: Date.now() + steps * 30_000,
        });
      const started = await client(s.server.url).post<{ secret: string }>('/adminApi/me/two-factor', { token: own.body.data.token });
      expect(started.status, started.text).to.equal(201);
      const confirmed = await client(s.server.url).post('/adminApi/me/two-factor/confirm', {
        token: own.body.data.token,
        json: { code: codeAt(started.body.data.secret) },
      });
      expect(confirmed.status, confirmed.text).to.equal(200);

      const run = await signInThroughProvider(s.server.url, address);
      const code = run.fragment.get('sso-code') ?? '';
      expect(code, run.landing.href).to.match(/^ssc_/);
      const answer = await client(s.server.url).post<{ twoFactorRequired: boolean; challenge: string }>('/adminApi/sso/exchange', {
        json: { code },
      });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.data).to.not.have.property('token');
      expect(answer.body.data.twoFactorRequired).to.equal(true);
      expect((await exchange(s.server, code)).status, 'the code is used up').to.equal(400);

      // A code of five minutes from now is outside the window: wrong.
      const wrong = await client(s.server.url).post('/adminApi/login/two-factor', {
        json: { challenge: answer.body.data.challenge, code: codeAt(started.body.data.secret, 10) },
      });
      expect(wrong.status).to.equal(401);
      // The enrolment used the current step's code: the next step's is fresh.
      const step = await client(s.server.url).post<{ token: string }>('/adminApi/login/two-factor', {
        json: { challenge: answer.body.data.challenge, code: codeAt(started.body.data.secret, 1) },
      });
      expect(step.status, step.text).to.equal(200);
      const me = await client(s.server.url).get<{ id: number }>('/adminApi/session', { token: step.body.data.token });
      expect(me.body.data.id).to.equal(created.body.data.id);
    });

    it('refuses an email the provider has not verified', async () => {
      const address = email('unverified');
      const token = await adminTokenOf(s.server);
      await client(s.server.url).post('/adminApi/operators', { token, json: { email: address, password: 'a long password', grants: [] } });
      const run = await signInThroughProvider(s.server.url, address);
      expect(run.fragment.get('sso-error')).to.equal('email_not_verified');
      expect(run.fragment.has('sso-code')).to.equal(false);
    });

    it('refuses an unknown email when createOperators is off, and creates nobody', async () => {
      const address = email('stranger');
      const run = await signInThroughProvider(s.server.url, address);
      expect(run.fragment.get('sso-error')).to.equal('operator_not_found');
      const operators = await client(s.server.url).get<Array<{ email: string }>>('/adminApi/operators', {
        token: await adminTokenOf(s.server),
      });
      expect(operators.body.data.map((o) => o.email)).not.to.include(address.toLowerCase());
    });

    it('refuses a disabled operator', async () => {
      const address = email('disabled');
      const token = await adminTokenOf(s.server);
      const created = await client(s.server.url).post<{ id: number }>('/adminApi/operators', {
        token,
        json: { email: address, password: 'a long password', grants: [] },
      });
      await client(s.server.url).put(`/adminApi/operators/${created.body.data.id}/disabled`, { token, json: { disabled: true } });
      const run = await signInThroughProvider(s.server.url, address);
      expect(run.fragment.get('sso-error')).to.equal('operator_disabled');
    });

    it('refuses a callback whose state was changed, and one without the attempt cookie', async () => {
      const address = email();
      const token = await adminTokenOf(s.server);
      await client(s.server.url).post('/adminApi/operators', { token, json: { email: address, password: 'a long password', grants: [] } });
      const tampered = await signInThroughProvider(s.server.url, address, {
        beforeCallback: (url) => {
          const changed = new URL(url);
          changed.searchParams.set('state', `${url.searchParams.get('state') ?? ''}x`);
          return changed;
        },
      });
      expect(tampered.fragment.get('sso-error')).to.equal('sso_state_mismatch');

      // A callback replayed in a browser that never started the attempt.
      let seen: URL | undefined;
      await signInThroughProvider(s.server.url, address, {
        beforeCallback: (url) => {
          seen = url;
          return new URL('/adminApi/sso/unknown', url);
        },
      }).catch(() => undefined);
      const replay = await fetch(seen ?? '', { redirect: 'manual' });
      expect(replay.status).to.equal(302);
      expect(replay.headers.get('location')).to.equal(`${s.server.url}/dashboard#sso-error=sso_attempt_expired`);
    });

    it('says so when the person declines at the provider, without a server error', async () => {
      const run = await signInThroughProvider(s.server.url, email(), { deny: true });
      expect(run.fragment.get('sso-error')).to.equal('sso_refused');
    });
  });

  describe('creating operators', () => {
    let s: Setup;
    let accountId: number;
    before(async () => {
      // The grants name an account, so the server starts on a fresh database whose first account is 1.
      s = await setup({ createOperators: ['conversations:read@1', 'accounts:read@*'], passwordSignIn: false });
      // Passwords are off here, so no operator could make it through the Admin API: made directly.
      accountId = (await createAccount(s.server.deps.db.orm.em.fork(), { name: 'SSO' })).id;
      expect(accountId).to.equal(1);
    });
    after(() => teardown(s));

    it('creates an unknown, verified email as an operator with the configured grants', async () => {
      const address = email('newcomer');
      const run = await signInThroughProvider(s.server.url, address);
      const session = await exchange(s.server, run.fragment.get('sso-code') ?? '');
      expect(session.status, `${run.landing.href} ${session.text}`).to.equal(200);
      const me = await client(s.server.url).get<{ email: string; grants: unknown[] }>('/adminApi/session', {
        token: session.body.data.token,
      });
      expect(me.body.data.email).to.equal(address.toLowerCase());
      expect(me.body.data.grants).to.have.deep.members([
        { permission: 'conversations:read', accountId },
        { permission: 'accounts:read', accountId: null },
      ]);
      // The second sign-in finds the operator it created.
      const again = await signInThroughProvider(s.server.url, address);
      expect(again.fragment.get('sso-code')).to.match(/^ssc_/);
    });

    it('still refuses an unverified email', async () => {
      const run = await signInThroughProvider(s.server.url, email('unverified'));
      expect(run.fragment.get('sso-error')).to.equal('email_not_verified');
    });

    it('refuses password sign-in when it is off, for a right password too, and says so to the sign-in page', async () => {
      const login = await client(s.server.url).post('/adminApi/login', { json: TEST_ADMIN });
      expect(login.status).to.equal(403);
      expect(login.body.notifications[0]?.message).to.equal('password_sign_in_disabled');
      const options = await client(s.server.url).get('/adminApi/login');
      expect(options.body.data).to.deep.equal({ password: false, sso: { name: 'Loopback ID', startUrl: '/adminApi/sso/start' } });
    });
  });

  describe('creating operators with a grant on an account that does not exist', () => {
    let s: Setup;
    before(async () => {
      s = await setup({ createOperators: ['conversations:read@999'] });
    });
    after(() => teardown(s));

    it('refuses the sign-in with a reason, creates nobody, and answers no server error', async () => {
      const address = email('newcomer');
      const run = await signInThroughProvider(s.server.url, address);
      expect(run.fragment.get('sso-error')).to.equal('sso_grants_invalid');
      const operators = await client(s.server.url).get<Array<{ email: string }>>('/adminApi/operators', {
        token: await adminTokenOf(s.server),
      });
      expect(operators.body.data.map((o) => o.email)).not.to.include(address.toLowerCase());
    });
  });

  describe('without sso.oidc', () => {
    it('offers passwords only and has no SSO routes', async () => {
      const api = client(sharedServer().url);
      expect((await api.get('/adminApi/login')).body.data).to.deep.equal({ password: true, sso: null });
      const start = await api.get('/adminApi/sso/start');
      expect(start.status).to.equal(404);
      expect(start.body.notifications[0]?.message).to.equal('sso_not_configured');
    });
  });
});
