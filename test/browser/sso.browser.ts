// Single sign-on in a real Chromium: the dashboard's "Sign in with …" button, the loopback
// OpenID provider's login and consent pages (test/support/oidc-provider.ts), and back in the
// dashboard signed in; refusals on the sign-in page; the page without the password form when
// password sign-in is off.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { expect } from 'chai';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { useBrowser } from '../support/browser.ts';
import { DASHBOARD_SHOTS, screenshots } from '../support/dashboard.ts';
import { client } from '../support/http.ts';
import { TEST_ADMIN } from '../support/server.ts';
import { SSO_NAME, startSsoServer, type SsoSetup } from '../support/sso.ts';

const address = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}@palaver.test`;

async function open(page: Page, s: SsoSetup): Promise<void> {
  await page.goto(`${s.server.url}/dashboard`);
  await page.locator('#app > *').first().waitFor();
}

/** At the provider's development pages: any login, then consent. */
async function signInAtProvider(page: Page, login: string): Promise<void> {
  await page.getByRole('link', { name: `Sign in with ${SSO_NAME}` }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

/** The page at 390 px, as a phone shows it: nothing wider than the screen. */
async function phoneShot(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await page.evaluate<number>('document.documentElement.scrollWidth'), `${name}: wider than the screen`).to.be.at.most(390);
  await page.screenshot({ path: `${DASHBOARD_SHOTS}/${name}-390.png` });
  await page.setViewportSize({ width: 1280, height: 900 });
}

describe('Dashboard single sign-on', function () {
  this.timeout(60_000);
  const browser = useBrowser();

  before(() => {
    mkdirSync(DASHBOARD_SHOTS, { recursive: true });
  });

  describe('beside passwords', () => {
    let s: SsoSetup;
    before(async () => {
      s = await startSsoServer();
    });
    after(() => s.stop());

    it('signs a known operator in through the provider and back, with no code left in the address', async () => {
      const { page } = browser();
      const email = address('sso-browser');
      const token = (await client(s.server.url).post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN })).body.data.token;
      const created = await client(s.server.url).post('/adminApi/operators', {
        token,
        json: { email, password: 'a long password', grants: [{ permission: 'accounts:read', accountId: null }] },
      });
      expect(created.status, created.text).to.equal(201);

      await open(page, s);
      await page.getByLabel('Email').waitFor();
      await screenshots(page, 'sign-in-sso');
      await phoneShot(page, 'sign-in-sso');

      await signInAtProvider(page, email);
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      expect(await page.locator('.who').textContent()).to.equal(email);
      expect(new URL(page.url()).hash, 'the one-time code is taken out of the address').not.to.include('sso-code');
      expect(await page.evaluate<number>('sessionStorage.length')).to.equal(1);
    });

    it('asks an operator with two-factor sign-in for the code after the provider, then signs them in', async () => {
      const { page } = browser();
      const email = address('sso-totp');
      const password = 'a long enough password';
      const api = client(s.server.url);
      const token = (await api.post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN })).body.data.token;
      const created = await api.post('/adminApi/operators', {
        token,
        json: { email, password, grants: [{ permission: 'accounts:read', accountId: null }] },
      });
      expect(created.status, created.text).to.equal(201);
      const own = (await api.post<{ token: string }>('/adminApi/login', { json: { email, password } })).body.data.token;
      const secret = (await api.post<{ secret: string }>('/adminApi/me/two-factor', { token: own })).body.data.secret;
      const codeAt = (steps: number) =>
        new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
          timestamp: Date.now() + steps * 30_000,
        });
      const confirmed = await api.post('/adminApi/me/two-factor/confirm', { token: own, json: { code: codeAt(0) } });
      expect(confirmed.status, confirmed.text).to.equal(200);

      await open(page, s);
      await signInAtProvider(page, email);
      await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
      expect(new URL(page.url()).hash, 'the one-time code is taken out of the address').not.to.include('sso-code');
      expect(await page.evaluate<number>('sessionStorage.length'), 'no session before the code').to.equal(0);
      await page.getByLabel('Authentication code').fill(codeAt(1));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      expect(await page.locator('.who').textContent()).to.equal(email);
    });

    it('comes back to the sign-in page saying why an unknown email is refused', async () => {
      const { page } = browser();
      await open(page, s);
      await signInAtProvider(page, address('stranger'));
      await page.getByRole('alert').filter({ hasText: 'No operator has the email address your identity provider gave.' }).waitFor();
      expect(new URL(page.url()).hash).to.equal('');
      expect(await page.evaluate<number>('sessionStorage.length')).to.equal(0);
    });
  });

  describe('with password sign-in off', () => {
    let s: SsoSetup;
    before(async () => {
      s = await startSsoServer({ createOperators: ['accounts:read@*'], passwordSignIn: false });
    });
    after(() => s.stop());

    it('shows only the SSO button, and creates a new operator with the configured grants', async () => {
      const { page } = browser();
      await open(page, s);
      const button = page.getByRole('link', { name: `Sign in with ${SSO_NAME}` });
      await button.waitFor();
      expect(await page.getByLabel('Email').count()).to.equal(0);
      expect(await page.getByLabel('Password').count()).to.equal(0);
      await screenshots(page, 'sign-in-sso-only');
      await phoneShot(page, 'sign-in-sso-only');

      const email = address('newcomer');
      await signInAtProvider(page, email);
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      expect(await page.locator('.who').textContent()).to.equal(email);
      // accounts:read everywhere: the accounts page, and no Operators link.
      await page.getByRole('heading', { name: 'Accounts' }).waitFor();
      expect(await page.getByRole('link', { name: 'Operators' }).count()).to.equal(0);
    });
  });
});
