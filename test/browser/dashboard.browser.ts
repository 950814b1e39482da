// Issue 15: the operator dashboard in a real Chromium against a real server, driven by the
// accessible names of its controls. What the page does is checked where it lands: loopback
// receivers (signed webhooks), the Admin API, the database and the media directory.
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { Secret, TOTP } from 'otpauth';
import { Webhook } from 'standardwebhooks';
import { useBrowser } from '../support/browser.ts';
import { DASHBOARD_SHOTS, expectAccessible, newOperator, openDashboard, screenshots, signIn, untilTrue } from '../support/dashboard.ts';
import { adminToken, createAccount, createService, type AccountData, type CreatedServiceData } from '../support/factories.ts';
import { PNG } from '../support/files.ts';
import { pdf, png } from './files.ts';
import { client } from '../support/http.ts';
import { outboxSettled, receivedExactly } from '../support/outbox.ts';
import { Receiver } from '../support/receiver.ts';
import { TEST_ADMIN, sharedServer, startTestServer } from '../support/server.ts';
import { until as readUntil } from '../support/until.ts';
import { Widget } from '../support/widget.ts';
import { startWidgetHost } from '../support/widget-host.ts';

const api = () => client(sharedServer().url);

async function adminIdentifier(): Promise<string> {
  const me = await api().get<{ identifier: string }>('/adminApi/session', { token: await adminToken() });
  return me.body.data.identifier;
}

/** What a phone (390 x 844) shows, where the page must not scroll sideways. */
async function phoneShot(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await page.evaluate<number>('document.documentElement.scrollWidth'), `${name}: wider than the screen`).to.be.at.most(390);
  await page.screenshot({ path: `${DASHBOARD_SHOTS}/${name}-390.png` });
  await page.setViewportSize({ width: 1280, height: 900 });
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

describe('Operator dashboard', function () {
  this.timeout(60_000);
  const browser = useBrowser();
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const started = await Receiver.start();
    receivers.push(started);
    return started;
  };

  // The bundles are built by the suite's root hook (test/support/hooks.ts).
  before(() => {
    mkdirSync(DASHBOARD_SHOTS, { recursive: true });
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  it('signs in, refuses a wrong password with a message, and signs out ending the session on the server', async () => {
    const { page } = browser();
    await openDashboard(page);
    await screenshots(page, 'sign-in');
    await page.getByLabel('Email').fill(TEST_ADMIN.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).to.equal(0);

    await signIn(page);
    const token = await page.evaluate<string | null>(`sessionStorage.getItem('palaver.dashboard.token')`);
    expect(token).to.be.a('string');
    // Kept in sessionStorage, never in a cookie.
    expect(await page.context().cookies()).to.deep.equal([]);
    expect((await api().get('/adminApi/session', { token: token ?? '' })).status).to.equal(200);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).to.equal(0);
    const after = await api().get('/adminApi/session', { token: token ?? '' });
    expect(after.status).to.equal(401);
  });

  it('says how long to wait when sign-ins are limited', async () => {
    const { page } = browser();
    const server = await startTestServer({ admin: { loginRateLimit: { points: 2, durationSeconds: 900 } } });
    try {
      await page.goto(`${server.url}/dashboard`);
      await page.getByLabel('Email').fill(`limited-${Date.now()}@palaver.test`);
      await page.getByLabel('Password').fill('not the password');
      for (let i = 0; i < 2; i++) {
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();
        await page.getByRole('button', { name: 'Sign in', disabled: false }).waitFor();
      }
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Too many attempts. Try again in 15 minutes.' }).waitFor();
    } finally {
      await server.stop();
    }
  });

  it('serves the page with a strict CSP and calls only routes of /openapi.json', async () => {
    const { page } = browser();
    const called = new Set<string>();
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/adminApi/')) called.add(`${request.method().toLowerCase()} ${url.pathname}`);
    });
    const answer = await page.goto(`${sharedServer().url}/dashboard`);
    expect(answer?.headers()['content-security-policy'])
      .to.include("script-src 'self'")
      .and.include("frame-ancestors 'none'")
      .and.include('img-src blob:;');
    await signIn(page);
    const account = await createAccount();
    await createService(account.id, { name: 'Only' });
    await page.goto(`${sharedServer().url}/dashboard#/accounts/${account.id}`);
    await page.getByRole('heading', { name: 'Default Service' }).waitFor();
    const document = JSON.parse((await api().get('/openapi.json')).text) as { paths: Record<string, Record<string, unknown>> };
    const patterns = Object.entries(document.paths).flatMap(([p, item]) =>
      Object.keys(item).map((method) => new RegExp(`^${method} ${p.replace(/\{\w+\}/g, '[^/]+')}$`)),
    );
    expect(called.size).to.be.greaterThan(2);
    for (const route of called)
      expect(
        patterns.some((p) => p.test(route)),
        route,
      ).to.equal(true);
  });

  it('creates an account and a Service on a loopback receiver, and "send test event" arrives signed', async () => {
    const { page } = browser();
    const hook = await receiver();
    hook.always({ status: 200, body: '{"received":true}' });
    await openDashboard(page);
    await signIn(page);
    await page.getByLabel('Account name').fill('Bakery');
    await page.getByRole('button', { name: 'Create account' }).click();
    const identification = await page.getByLabel('Account identification', { exact: true }).inputValue();
    expect(await page.getByLabel('Authorization secret', { exact: true }).inputValue()).to.match(/\S{16,}/);
    await screenshots(page, 'accounts');
    await page.getByRole('link', { name: 'Open Bakery' }).click();
    const snippet = await page.getByLabel('Embed snippet', { exact: true }).inputValue();
    expect(snippet).to.equal(`<script src="${sharedServer().url}/widget.js" data-account="${identification}" async></script>`);

    await page.getByLabel('Service name').fill('Helpdesk');
    await page.getByLabel('Webhook URL').fill(`${hook.url}/hook`);
    // The warning follows each input event at once: this server allows private addresses.
    expect(await page.getByText('This is a private address').count()).to.equal(0);
    await page.getByRole('button', { name: 'Create Service' }).click();
    const signingSecret = await page.getByLabel('Signing secret', { exact: true }).inputValue();
    expect(await page.getByLabel('API key', { exact: true }).inputValue())
      .to.be.a('string')
      .and.not.equal('');
    await screenshots(page, 'account');
    await page.getByRole('link', { name: 'Open Helpdesk' }).click();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('Delivered: the receiver answered 200.').waitFor();
    await page.getByText('{"received":true}').waitFor();

    const [request] = await hook.waitFor(1);
    expect(request?.path).to.equal('/hook');
    const verified = new Webhook(signingSecret).verify(request?.body ?? '', request?.headers as Record<string, string>) as {
      type: string;
      accountIdentification: string;
      body: { action: string; initiatedBy: string };
    };
    expect(verified).to.deep.include({ type: 'test', accountIdentification: identification });
    expect(verified.body).to.include({ action: 'test', initiatedBy: await adminIdentifier() });
    await screenshots(page, 'service');
  });

  describe('default Service', () => {
    let account: AccountData;
    let services: CreatedServiceData[];
    let hooks: Receiver[];

    beforeEach(async () => {
      hooks = [await receiver(), await receiver()];
      account = await createAccount();
      services = [
        await createService(account.id, { name: 'First', webhookUrl: `${hooks[0]?.url}/hook` }),
        await createService(account.id, { name: 'Second', webhookUrl: `${hooks[1]?.url}/hook` }),
      ];
    });

    it('changes from the account page: every Service receives the exact changeDefaultService payload', async () => {
      const { page } = browser();
      await openDashboard(page, `#/accounts/${account.id}`);
      await signIn(page);
      await page.getByRole('combobox', { name: 'Default Service' }).selectOption({ label: 'Second' });
      await page.getByRole('button', { name: 'Change default Service' }).click();
      await page.getByText('Second is now the default; every Service is told.').waitFor();
      const [first, second] = services as [CreatedServiceData, CreatedServiceData];
      const expected = {
        type: 'service',
        accountIdentification: account.identification,
        body: {
          action: 'changeDefaultService',
          metadata: '',
          initiatedBy: await adminIdentifier(),
          oldDefaultService: { name: 'First', identification: first.identification },
          newDefaultService: { name: 'Second', identification: second.identification },
        },
      };
      for (const [n, service] of [first, second].entries()) {
        const got = await receivedExactly(hooks[n] as Receiver, service.id, 1);
        expect(got[0]?.json).to.deep.equal(expected);
      }
    });

    it('moves the "default" badge in the Services list at once, without a reload', async () => {
      const { page } = browser();
      await openDashboard(page, `#/accounts/${account.id}`);
      await signIn(page);
      const list = page.getByRole('region', { name: 'Services' }).getByRole('listitem');
      const badged = () => list.filter({ has: page.locator('.badge', { hasText: /^default$/ }) });
      await list.first().waitFor();
      expect(await badged().getByRole('link').allInnerTexts()).to.deep.equal(['First']);
      // Gone with a reload or a navigation of the document.
      await page.evaluate('window.sameDocument = true');

      await page.getByRole('combobox', { name: 'Default Service' }).selectOption({ label: 'Second' });
      await page.getByRole('button', { name: 'Change default Service' }).click();
      await page.getByText('Second is now the default; every Service is told.').waitFor();
      await badged().filter({ hasText: 'Second' }).waitFor({ timeout: 5000 });
      expect(await badged().getByRole('link').allInnerTexts()).to.deep.equal(['Second']);
      expect(await page.evaluate('window.sameDocument'), 'no reload').to.equal(true);
      expect(await page.getByRole('combobox', { name: 'Default Service' }).inputValue()).to.equal(services[1]?.identification);
      await screenshots(page, 'default-service-changed');
    });

    it('is disabled with the reason for an operator without services:edit, and the API refuses them (403)', async () => {
      const { page } = browser();
      const reader = await newOperator([{ permission: 'accounts:read', accountId: account.id }]);
      await openDashboard(page, `#/accounts/${account.id}`);
      await signIn(page, reader.email, reader.password);
      const select = page.getByRole('combobox', { name: 'Default Service' });
      await select.waitFor();
      expect(await select.isDisabled()).to.equal(true);
      expect(await page.getByRole('button', { name: 'Change default Service' }).isDisabled()).to.equal(true);
      await page
        .getByText('Changing the default Service needs the services:edit and conversations:read permissions on this account.')
        .waitFor();
      await screenshots(page, 'account-read-only');

      const token = await page.evaluate<string | null>(`sessionStorage.getItem('palaver.dashboard.token')`);
      const refused = await api().put(`/adminApi/accounts/${account.id}/default-service`, {
        token: token ?? '',
        json: { serviceIdentification: services[1]?.identification },
      });
      expect(refused.status).to.equal(403);
      expect(refused.body.notifications[0]?.message).to.equal('permission_denied');
      const after = await api().get<{ defaultServiceId: number }>(`/adminApi/accounts/${account.id}`, { token: await adminToken() });
      expect(after.body.data.defaultServiceId).to.equal(services[0]?.id);

      // A Service's page shows them where its webhooks go and whether they go, nothing to change.
      await page.getByRole('link', { name: services[0]?.name ?? '' }).click();
      const settings = page.getByRole('region', { name: 'Settings' });
      await settings.getByText('Webhook URL:').waitFor();
      await settings.getByText('enabled', { exact: true }).waitFor();
      expect(await page.getByRole('button', { name: 'Save Service' }).count()).to.equal(0);
    });

    it('offers what sends conversation content elsewhere only with conversations:read beside services:edit', async () => {
      const { page } = browser();
      const grants = (...permissions: string[]) => permissions.map((permission) => ({ permission, accountId: account.id }));
      const editor = await newOperator(grants('accounts:read', 'services:edit'));
      await openDashboard(page, `#/accounts/${account.id}/services/${services[0]?.id}`);
      await signIn(page, editor.email, editor.password);
      await page.getByRole('button', { name: 'Save Service' }).waitFor();
      expect(await page.getByRole('textbox', { name: 'Webhook URL' }).isDisabled()).to.equal(true);
      expect(await page.getByRole('button', { name: 'Send test event' }).isDisabled()).to.equal(true);
      expect(await page.getByRole('button', { name: 'Add API key' }).isDisabled()).to.equal(true);
      await page.getByText('Adding an API key needs the services:edit and conversations:read permissions on this account.').waitFor();
      // The name still saves (without the webhook URL).
      await page.getByRole('textbox', { name: 'Name' }).fill('First renamed');
      await page.getByRole('button', { name: 'Save Service' }).click();
      await page.getByText('Service saved.').waitFor();
      await page.getByRole('link', { name: account.name }).click();
      await page.getByText('Creating a Service (its API key reads conversations) needs the services:edit').waitFor();
      expect(await page.getByRole('button', { name: 'Create Service' }).count()).to.equal(0);
      expect(await page.getByRole('button', { name: 'Change default Service' }).isDisabled()).to.equal(true);
      await page.getByRole('button', { name: 'Sign out' }).click();
      // Signed out once the form is back: the sign-out clears the address's hash when the server
      // answers, which would otherwise land after the navigation below and open the accounts page.
      await page.getByRole('button', { name: 'Sign in' }).waitFor();

      const both = await newOperator(grants('accounts:read', 'services:edit', 'conversations:read'));
      await openDashboard(page, `#/accounts/${account.id}/services/${services[0]?.id}`);
      await signIn(page, both.email, both.password);
      await page.getByRole('button', { name: 'Save Service' }).waitFor();
      expect(await page.getByRole('textbox', { name: 'Webhook URL' }).isDisabled()).to.equal(false);
      expect(await page.getByRole('button', { name: 'Send test event' }).isDisabled()).to.equal(false);
      expect(await page.getByRole('button', { name: 'Add API key' }).isDisabled()).to.equal(false);
    });
  });

  it('tells an operator without any grant why the account list is empty', async () => {
    const { page } = browser();
    const nobody = await newOperator([]);
    await openDashboard(page);
    await signIn(page, nobody.email, nobody.password);
    await page.getByText('No account you may read. Ask an operator who manages operators for a grant.').waitFor();
  });

  it('team inbox: the customer writes in the widget, the operator takes it, notes and answers, and the widget shows the answer', async () => {
    const { page, context } = browser();
    const account = await createAccount();
    const token = await adminToken();
    const shown = await api().get<{ inbox: { identification: string } }>(`/adminApi/accounts/${account.id}`, { token });
    // Humans answer everything: the inbox is the default Service.
    const chosen = await api().put(`/adminApi/accounts/${account.id}/default-service`, {
      token,
      json: { serviceIdentification: shown.body.data.inbox.identification },
    });
    expect(chosen.status, chosen.text).to.equal(200);
    const canned = await api().post(`/adminApi/accounts/${account.id}/canned-replies`, {
      token,
      json: { shortcut: 'thanks', text: 'Thank you for waiting!' },
    });
    expect(canned.status, canned.text).to.equal(201);
    const site = await startWidgetHost(sharedServer().url, { account: account.identification, data: { title: 'Chat with Acme' } });
    try {
      await openDashboard(page, `#/accounts/${account.id}/inbox`);
      await signIn(page);
      await page.getByText('No conversations here.').waitFor();

      // The customer, in Palaver's widget on another origin.
      const customer = await context.newPage();
      await customer.goto(site.url);
      await customer.getByRole('button', { name: 'Open chat' }).click();
      await customer.getByRole('textbox', { name: 'Message' }).fill('Hello, is anyone there?');
      await customer.getByRole('textbox', { name: 'Message' }).press('Enter');
      await customer.getByRole('log').getByText('Hello, is anyone there?').waitFor();

      // Live under Unassigned, unread.
      const entry = page.getByRole('list', { name: 'Inbox conversations' }).getByRole('link', { name: /Anonymous user/ });
      await entry.getByText('1 unread').waitFor();
      await entry.click();
      const timelineList = page.getByRole('list', { name: 'Timeline' });
      await timelineList.getByText('Hello, is anyone there?').waitFor();
      await page.getByRole('button', { name: 'Assign to me' }).click();
      await page.getByRole('button', { name: 'Unassign' }).waitFor();

      // A private note: in the timeline, never in the widget.
      const reply = page.getByRole('textbox', { name: 'Reply' });
      await page.getByRole('checkbox', { name: /Private note/ }).check();
      await reply.fill('Looks like a returning customer');
      await reply.press('Enter');
      await timelineList.getByText('Looks like a returning customer').waitFor();
      await page.getByRole('checkbox', { name: /Private note/ }).uncheck();

      // `/` offers the canned replies; Shift+Enter is a new line, Enter sends.
      await reply.fill('/tha');
      await page.getByRole('button', { name: '/thanks: Thank you for waiting!' }).click();
      await reply.press('Shift+Enter');
      await reply.pressSequentially('How can I help?');
      expect(await reply.inputValue()).to.equal('Thank you for waiting!\nHow can I help?');
      await reply.press('Enter');
      await timelineList.getByText(/Thank you for waiting!/).waitFor();
      await customer
        .getByRole('log')
        .getByText(/Thank you for waiting!/)
        .waitFor();
      expect(await customer.getByRole('log').textContent()).to.not.include('returning customer');

      await page.getByRole('button', { name: 'Resolve', exact: true }).click();
      await page.getByRole('button', { name: 'Reopen' }).waitFor();
      await page.screenshot({ path: `${DASHBOARD_SHOTS}/inbox-1280.png`, fullPage: true });
      await customer.screenshot({ path: `${DASHBOARD_SHOTS}/inbox-widget.png` });
      await expectAccessible(page, 'inbox');
      // The customer writes again: reopened.
      await customer.getByRole('textbox', { name: 'Message' }).fill('One more question');
      await customer.getByRole('textbox', { name: 'Message' }).press('Enter');
      await page.getByRole('button', { name: 'Resolve', exact: true }).waitFor();
      await timelineList.getByText('One more question').waitFor();
    } finally {
      await site.close();
    }
  });

  it('shows a widget conversation live with its messages, and an agent message as it arrives', async () => {
    const { page } = browser();
    const account = await createAccount();
    const service = await createService(account.id, { name: 'Support' });
    await openDashboard(page, `#/accounts/${account.id}/conversations`);
    await signIn(page);
    await page.getByText('No conversations yet.').waitFor();

    const widget = new Widget(account);
    const registered = await widget.register({ type: 3, version: '1.9.0' });
    expect(registered.status, registered.text).to.equal(200);
    const userId = registered.body.data.userId;
    expect((await widget.send('Where is my order?')).status).to.equal(200);
    // Live: no reload, no click.
    const entry = page.getByRole('link', { name: /Where is my order\?/ });
    await entry.waitFor();
    await entry.click();
    await page.getByRole('list', { name: 'Messages' }).getByText('Where is my order?').waitFor();

    const agent = await api().post(`/users/${userId}/messages`, {
      token: service.apiKey,
      json: { message: 'It ships today.', agent: { id: 7, name: 'Dana' } },
    });
    expect(agent.status, agent.text).to.equal(201);
    await page.getByRole('list', { name: 'Messages' }).getByText('It ships today.').waitFor();
    await page.getByText('agent: Dana').waitFor();
    await screenshots(page, 'conversations');
  });

  it('lists conversations by last activity, one request a page with "Show more conversations", coalescing live changes', async () => {
    const { page } = browser();
    const account = await createAccount();
    await createService(account.id, { name: 'Support' });
    // 55 visitors (a page is 50): every widget open registers a user, most never write.
    const visitors: Array<{ widget: Widget; userId: number }> = [];
    for (let i = 0; i < 55; i++) {
      const widget = new Widget(account);
      const registered = await widget.register({ type: 3 });
      expect(registered.status, registered.text).to.equal(200);
      visitors.push({ widget, userId: registered.body.data.userId });
    }
    const [oldest, second] = [visitors[0], visitors[1]];
    if (!oldest || !second) throw new Error('no visitors');
    expect((await second.widget.send('Do you ship abroad?')).status).to.equal(200);
    // The oldest user writes last: first in the list, although 54 users are newer.
    expect((await oldest.widget.send('Is my order on its way?')).status).to.equal(200);
    const lists: string[] = [];
    const perUser: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === `/adminApi/accounts/${account.id}/conversations`) lists.push(url.search);
      if (/\/users\/\d+\/messages$/.test(url.pathname)) perUser.push(url.pathname);
    });

    await openDashboard(page, `#/accounts/${account.id}/conversations`);
    await signIn(page);
    const entries = page.getByRole('list', { name: 'Users' }).getByRole('listitem');
    await entries.first().getByText('Is my order on its way?').waitFor();
    await entries.nth(1).getByText('Do you ship abroad?').waitFor();
    expect(await entries.count()).to.equal(50);
    const more = page.getByRole('button', { name: 'Show more conversations' });
    await page.screenshot({ path: `${DASHBOARD_SHOTS}/conversations-first-page-1280.png` });
    await more.click();
    await untilTrue(page, `document.querySelectorAll('ul.users > li').length === 55`);
    await more.waitFor({ state: 'hidden' });
    const shown = await page.evaluate<string[]>(`[...document.querySelectorAll('ul.users a')].map((a) => a.getAttribute('href'))`);
    const expected = [
      oldest.userId,
      second.userId,
      ...visitors
        .slice(2)
        .map((v) => v.userId)
        .reverse(),
    ];
    expect(shown).to.deep.equal(expected.map((id) => `#/accounts/${account.id}/conversations/${id}`));
    expect(lists).to.have.length(2);
    expect(perUser, 'no request per user').to.deep.equal([]);
    await screenshots(page, 'conversations-by-activity');
    await phoneShot(page, 'conversations-by-activity');

    // Five visitors write at once while the list is slow to answer: one read in flight, one queued.
    await page.route('**/conversations?*', async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      await route.continue();
    });
    lists.length = 0;
    const writers = visitors.slice(10, 15);
    await Promise.all(writers.map((v, i) => v.widget.send(`Question ${i}`)));
    await entries
      .first()
      .getByText(/Question \d/)
      .waitFor();
    await untilTrue(page, `[...document.querySelectorAll('ul.users .last')].slice(0, 5).every((e) => /Question \\d/.test(e.textContent))`);
    expect(lists.length, lists.join(' ')).to.be.within(1, 2);
    // The pages loaded before stay: still every conversation, each once.
    expect(await entries.count()).to.equal(55);
    expect(perUser).to.deep.equal([]);
  });

  it('opens a conversation at its newest message, stays there as messages arrive, and keeps the place of an operator who scrolled up', async () => {
    const { page } = browser();
    const account = await createAccount();
    await createService(account.id, { name: 'Support' });
    const widget = new Widget(account);
    const registered = await widget.register({ type: 3 });
    const userId = registered.body.data.userId;
    for (let i = 1; i <= 40; i++) expect((await widget.send(`Message number ${i}`)).status).to.equal(200);
    const atBottom = `(() => { const l = document.querySelector('ol.messages'); return l.scrollHeight - l.scrollTop - l.clientHeight < 24 && l.scrollHeight > l.clientHeight; })()`;

    await openDashboard(page, `#/accounts/${account.id}/conversations/${userId}`);
    await signIn(page);
    const messages = page.getByRole('list', { name: 'Messages' });
    await messages.getByText('Message number 40', { exact: true }).waitFor();
    expect(await page.evaluate<boolean>(atBottom), 'opens at the newest message').to.equal(true);

    expect((await widget.send('A live one')).status).to.equal(200);
    await messages.getByText('A live one').waitFor();
    await untilTrue(page, atBottom);
    expect(await page.evaluate<boolean>(atBottom), 'stays at the newest message').to.equal(true);

    // Scrolled up to read (its scroll event at once, not at the next frame): a new message does not move the view.
    await page.evaluate(
      `(() => { const l = document.querySelector('ol.messages'); l.scrollTop = 100; l.dispatchEvent(new Event('scroll')); })()`,
    );
    expect((await widget.send('Another live one')).status).to.equal(200);
    await messages.getByText('Another live one').waitFor();
    expect(await page.evaluate<number>(`document.querySelector('ol.messages').scrollTop`)).to.equal(100);
  });

  it('shows older messages on request above the newest 200, keeping what the operator reads in place', async () => {
    const { page } = browser();
    const account = await createAccount();
    await createService(account.id, { name: 'Support' });
    const widget = new Widget(account);
    const userId = (await widget.register({ type: 3 })).body.data.userId;
    for (let i = 1; i <= 230; i++) expect((await widget.send(`Line ${i}`)).status).to.equal(200);

    await openDashboard(page, `#/accounts/${account.id}/conversations/${userId}`);
    await signIn(page);
    const messages = page.getByRole('list', { name: 'Messages' });
    await messages.getByText('Line 230', { exact: true }).waitFor();
    expect(await messages.getByRole('listitem').count(), 'the newest page').to.equal(200);
    expect(await messages.getByText('Line 30', { exact: true }).count()).to.equal(0);
    await screenshots(page, 'conversation-older');

    // Scrolled to the top, where the oldest loaded message is read.
    await page.evaluate(
      `(() => { const l = document.querySelector('ol.messages'); l.scrollTop = 0; l.dispatchEvent(new Event('scroll')); })()`,
    );
    const reading = messages.getByText('Line 31', { exact: true });
    const before = (await reading.boundingBox())?.y;
    await page.getByRole('button', { name: 'Show older messages' }).click();
    await messages.getByText('Line 1', { exact: true }).waitFor();
    expect(await messages.getByRole('listitem').count()).to.equal(230);
    expect((await reading.boundingBox())?.y, 'the message read stays where it was').to.be.closeTo(before ?? -1, 1);
    expect(await page.getByRole('button', { name: 'Show older messages' }).isHidden(), 'nothing older').to.equal(true);

    // A live message keeps the older ones loaded.
    expect((await widget.send('Line 231')).status).to.equal(200);
    await messages.getByText('Line 231', { exact: true }).waitFor();
    expect(await messages.getByRole('listitem').count()).to.equal(231);
  });

  it('wraps a long URL inside its bubble: no sideways scrolling at 390 px', async () => {
    const { page } = browser();
    const account = await createAccount();
    await createService(account.id, { name: 'Support' });
    const widget = new Widget(account);
    const userId = (await widget.register({ type: 3 })).body.data.userId;
    const url = `https://shop.example/orders/track?number=${'8'.repeat(40)}&token=${'abcdef0123456789'.repeat(8)}`;
    expect((await widget.send(`It says not found: ${url}`)).status).to.equal(200);
    expect((await widget.send('Can you check?')).status).to.equal(200);
    await openDashboard(page, `#/accounts/${account.id}/conversations/${userId}`);
    await signIn(page);
    await page.getByRole('list', { name: 'Messages' }).getByText('Can you check?').waitFor();
    await screenshots(page, 'conversation-long-url');
    // Opened on a phone: the conversation, under the list there, is brought into view, its newest message shown.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByRole('list', { name: 'Messages' }).getByText('Can you check?').waitFor();
    await untilTrue(
      page,
      `(() => { const r = [...document.querySelectorAll('.message')].pop().getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`,
    );
    const bubble = await page.evaluate<{ bubble: number; list: number }>(`(() => {
      const bubble = [...document.querySelectorAll('.message')].find((m) => m.textContent.includes('not found')).getBoundingClientRect();
      const list = document.querySelector('ol.messages').getBoundingClientRect();
      return { bubble: bubble.right, list: list.right };
    })()`);
    expect(bubble.bubble).to.be.at.most(bubble.list);
    await phoneShot(page, 'conversation-long-url');
  });

  it("shows a conversation's image inline and downloads a PDF when asked, fetched with the operator's token", async () => {
    const { page, console: pageConsole } = browser();
    const account = await createAccount();
    await createService(account.id, { name: 'Support' });
    const widget = new Widget(account);
    const registered = await widget.register({ type: 3 });
    expect(registered.status, registered.text).to.equal(200);
    const userId = registered.body.data.userId;
    const document = pdf();
    for (const [bytes, type, name] of [
      [png(160), 'image/png', 'broken-lamp.png'],
      [document, 'application/pdf', 'invoice.pdf'],
    ] as const) {
      const form = new FormData();
      form.append('media', new Blob([bytes], { type }), name);
      const upload = await fetch(`${widget.baseUrl}/media`, { method: 'POST', headers: widget.headers(), body: form });
      const media = ((await upload.json()) as { data: { media: string } }).data.media;
      expect((await widget.send({ media: { id: media } })).status).to.equal(200);
    }
    expect((await widget.send('The lamp arrived broken, photo and invoice attached.')).status).to.equal(200);
    const mediaRequests: Array<{ url: string; authorization: string | undefined; cookie: string | undefined }> = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.includes('/media/'))
        mediaRequests.push({ url: request.url(), authorization: request.headers().authorization, cookie: request.headers().cookie });
    });

    await openDashboard(page, `#/accounts/${account.id}/conversations`);
    await signIn(page);
    const entry = page.getByRole('link', { name: /The lamp arrived broken/ });
    await entry.waitFor();
    await screenshots(page, 'conversation-list');
    await entry.click();
    expect(new URL(page.url()).hash).to.equal(`#/accounts/${account.id}/conversations/${userId}`);
    const messages = page.getByRole('list', { name: 'Messages' });
    const image = messages.getByRole('img', { name: 'broken-lamp.png' });
    await image.waitFor();
    await untilTrue(page, `document.querySelector('img[alt="broken-lamp.png"]')?.naturalWidth === 160`);
    expect(await image.getAttribute('src')).to.match(/^blob:/);
    // The image opens full size in a new tab, from the same object URL.
    const full = messages.getByRole('link', { name: 'broken-lamp.png' });
    expect(await full.getAttribute('href')).to.equal(await image.getAttribute('src'));
    const [tab] = await Promise.all([page.waitForEvent('popup'), full.click()]);
    expect(tab.url()).to.match(/^blob:/);
    await untilTrue(tab, `document.querySelector('img')?.naturalWidth === 160`);
    await tab.close();
    expect(pageConsole.filter((line) => /Content Security Policy/i.test(line))).to.deep.equal([]);

    expect(document.length).to.be.below(1000);
    // The PDF is fetched only when asked for: the image alone so far.
    expect(mediaRequests.map((r) => new URL(r.url).pathname.split('.').pop())).to.deep.equal(['png']);
    const [saved] = await Promise.all([
      page.waitForEvent('download'),
      messages.getByRole('button', { name: 'Download invoice.pdf' }).click(),
    ]);
    expect(saved.suggestedFilename()).to.equal('invoice.pdf');
    const savedPath = await saved.path();
    expect(readFileSync(savedPath).equals(document)).to.equal(true);
    await messages.getByText(`Downloaded as invoice.pdf (${document.length} B)`).waitFor();

    // Each file once, with the bearer token and no cookie, from the Admin API route.
    expect(mediaRequests).to.have.length(2);
    for (const request of mediaRequests) {
      expect(new URL(request.url).pathname).to.match(
        new RegExp(`^/adminApi/accounts/${account.id}/media/\\d{4}/\\d{1,2}/\\d{1,2}/[0-9a-f-]{36}\\.(png|pdf)$`),
      );
      expect(request.authorization).to.match(/^Bearer \S+$/);
      expect(request.cookie).to.equal(undefined);
    }
    await screenshots(page, 'conversation-media');
  });

  it('changes the owner Service from a conversation: old and new owner receive changeOwner initiated by the operator', async () => {
    const { page } = browser();
    const [oldHook, newHook] = [await receiver(), await receiver()];
    const account = await createAccount();
    const first = await createService(account.id, { name: 'Sales', webhookUrl: `${oldHook.url}/hook` });
    const second = await createService(account.id, { name: 'Returns', webhookUrl: `${newHook.url}/hook` });
    const widget = new Widget(account);
    const userId = (await widget.register({ type: 3 })).body.data.userId;
    expect((await widget.send('I want to return this')).status).to.equal(200);
    await oldHook.waitFor(1);

    await openDashboard(page, `#/accounts/${account.id}/conversations/${userId}`);
    await signIn(page);
    await page.getByRole('combobox', { name: 'Owner Service' }).selectOption({ label: 'Returns' });
    await page.getByRole('button', { name: 'Change owner' }).click();
    await page.getByText('owner Returns').waitFor();

    const isChange = (r: { json: unknown }) => (r.json as { body?: { action?: string } }).body?.action === 'changeOwner';
    const [toOld] = (await oldHook.waitFor(2)).filter(isChange);
    const [toNew] = (await newHook.waitFor(1)).filter(isChange);
    const body = {
      action: 'changeOwner',
      metadata: '',
      oldOwner: { name: 'Sales', identification: first.identification, default: true },
      newOwner: { name: 'Returns', identification: second.identification, default: false },
      initiatedBy: { name: 'operator', identification: await adminIdentifier(), default: false },
    };
    expect((toOld?.json as { body: unknown }).body).to.deep.equal(body);
    expect((toNew?.json as { body: unknown }).body).to.deep.equal(body);
    expect(toOld?.json).to.deep.include({ type: 'owner', accountIdentification: account.identification });
  });

  it('counts a failing delivery live as it dies, shows each attempt, and redelivers it once the receiver is back', async () => {
    const { page } = browser();
    const hook = await receiver();
    // A 503 is retried; a 400 is a refusal: dead at the second attempt.
    hook.enqueue({ status: 503, headers: { 'retry-after': '0' } }).always({ status: 400, body: '{"error":"nope"}' });
    const account = await createAccount();
    const service = await createService(account.id, { name: 'Flaky', webhookUrl: `${hook.url}/hook` });
    await openDashboard(page, `#/accounts/${account.id}/services/${service.id}`);
    await signIn(page);
    const deliveries = page.getByRole('region', { name: 'Deliveries' });
    const numbers = deliveries.getByRole('group', { name: 'Delivery numbers' });
    const count = (state: string) => numbers.locator(`[data-count="${state}"]`);
    await count('dead').filter({ hasText: /^0$/ }).waitFor();

    // Nothing is clicked from here on: the numbers follow the outcomes over the live channel.
    const widget = new Widget(account);
    const userId = (await widget.register({ type: 3 })).body.data.userId;
    expect((await widget.send('Lost in transit')).status).to.equal(200);
    await count('dead').filter({ hasText: /^1$/ }).waitFor();
    expect(hook.requests).to.have.length(2);
    expect(await count('pending').textContent()).to.equal('0');
    expect(await count('delivered').textContent()).to.equal('0');
    // The two attempts are a fraction of a second apart, and may fall on either side of a minute's end.
    await numbers.getByRole('img', { name: /^Last hour: 0 attempts delivered, 2 failed; busiest minute [12]\.$/ }).waitFor();

    await page.getByRole('combobox', { name: 'State' }).selectOption('dead');
    await deliveries.getByText('HTTP 400: refused').waitFor();
    await deliveries.getByText('Attempts', { exact: true }).click();
    const attempts = deliveries.getByRole('table', { name: 'Attempts, oldest first' });
    await attempts.waitFor();
    // Times and durations vary: every other cell is exact.
    const rows: string[][] = [];
    for (const row of await attempts.locator('tbody tr').all()) {
      const cells = await row.locator('td').allTextContents();
      rows.push(cells.map((text, n) => (n === 1 || n === 2 ? '' : text.replace(/ \(next .*\)$/, ''))));
    }
    expect(rows).to.deep.equal([
      ['1', '', '', '503', 'to be retried', 'HTTP 503'],
      ['2', '', '', '400', 'gave up', 'HTTP 400: refused'],
    ]);
    // The user filter (applied when the field is left): another user has none, this one has it.
    await deliveries.getByLabel('User id').fill(String(userId + 1000));
    await deliveries.getByLabel('User id').blur();
    await deliveries.getByText('No deliveries.').waitFor();
    await deliveries.getByLabel('User id').fill(String(userId));
    await deliveries.getByLabel('User id').blur();
    await deliveries.getByText('HTTP 400: refused').waitFor();
    await deliveries.getByText('Attempts', { exact: true }).click();
    await attempts.waitFor();
    await screenshots(page, 'deliveries');

    hook.always({ status: 200 });
    await deliveries.getByRole('button', { name: 'Redeliver' }).click();
    const [, , again] = await hook.waitFor(3);
    expect((again?.json as { message?: string }).message).to.equal('Lost in transit');
    await outboxSettled(service.id);
    await count('delivered').filter({ hasText: /^1$/ }).waitFor();
    expect(await count('dead').textContent()).to.equal('0');
    expect(await count('pending').textContent()).to.equal('0');
    await page.getByRole('combobox', { name: 'State' }).selectOption('delivered');
    await deliveries.getByText('delivered', { exact: true }).waitFor();
    await deliveries.getByText('Attempts', { exact: true }).click();
    await attempts.locator('tbody tr').nth(2).filter({ hasText: 'delivered' }).waitFor();
    expect(await attempts.locator('tbody tr').count()).to.equal(3);
  });

  it('warns of a private webhook address where the server refuses them', async () => {
    const { page } = browser();
    const server = await startTestServer({ webhooks: { allowPrivate: false } });
    try {
      const { email, password } = server.config.admin;
      const api = client(server.url);
      const token = (await api.post<{ token: string }>('/adminApi/login', { json: { email, password } })).body.data.token;
      const account = await api.post<{ id: number }>('/adminApi/accounts', { token, json: { name: 'Production shop' } });
      await page.goto(`${server.url}/dashboard#/accounts/${account.body.data.id}`);
      await signIn(page, email ?? '', password ?? '');
      await page.getByLabel('Webhook URL').fill('http://127.0.0.1:4000/');
      await page.getByText('This is a private address: deliveries to it are refused').waitFor();
      await page.getByLabel('Webhook URL').fill('https://bot.example.com/palaver');
      expect(await page.getByText('This is a private address').count()).to.equal(0);
    } finally {
      await server.stop();
    }
  });

  it('sends the deliveries waiting out a long retry at once when asked, in order; the one behind says what it waits for', async () => {
    const { page } = browser();
    const hook = await receiver();
    // The Service is down and says so for an hour; it is back before that.
    hook.enqueue({ status: 503, headers: { 'retry-after': '3600' } }).always({ status: 200 });
    const account = await createAccount();
    const service = await createService(account.id, { name: 'Redeployed', webhookUrl: `${hook.url}/hook` });
    await openDashboard(page, `#/accounts/${account.id}/services/${service.id}`);
    await signIn(page);
    const deliveries = page.getByRole('region', { name: 'Deliveries' });
    const widget = new Widget(account);
    await widget.register({ type: 3 });
    expect((await widget.send('During the outage')).status).to.equal(200);
    await hook.waitFor(1);
    expect((await widget.send('Right after')).status).to.equal(200);
    // The 503's outcome is committed after the receiver answered it, and the log is read once
    // when the filter changes (live notices reload the counts, not the log): read it after that.
    const token = await adminToken();
    await readUntil(
      "the first attempt's outcome",
      async () =>
        (await api().get<Array<{ attempts: number }>>(`/adminApi/services/${service.id}/deliveries?state=pending`, { token })).body.data,
      (pending) => pending.some((d) => d.attempts === 1),
    );

    await page.getByRole('combobox', { name: 'State' }).selectOption('pending');
    await deliveries.getByText(/1 attempt · last status 503 · HTTP 503 · next attempt /).waitFor();
    await deliveries.getByText(/0 attempts · waits for an earlier delivery of its conversation$/).waitFor();
    await screenshots(page, 'deliveries-waiting');

    await deliveries.getByRole('button', { name: 'Retry waiting now' }).click();
    await deliveries.getByText('Retrying 1 delivery now.').waitFor();
    const sent = await hook.waitFor(3);
    expect(sent.map((r) => (r.json as { message?: string }).message)).to.deep.equal([
      'During the outage',
      'During the outage',
      'Right after',
    ]);
    await outboxSettled(service.id);
    await deliveries.getByRole('button', { name: 'Retry waiting now' }).click();
    await deliveries.getByText('No delivery was waiting for a retry.').waitFor();
  });

  it("rotates an account's authorization secret with a confirmation, shown once; both secrets sign in during the grace period", async () => {
    const { page } = browser();
    const account = await createAccount();
    await createService(account.id, { name: 'Support' });
    await openDashboard(page, `#/accounts/${account.id}`);
    await signIn(page);
    const section = page.getByRole('region', { name: 'Authorization secret' });
    await section.getByRole('button', { name: 'Rotate authorization secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate authorization secret' }).getByRole('button', { name: 'Rotate secret' }).click();
    const secret = await section.getByLabel('New authorization secret', { exact: true }).inputValue();
    expect(secret)
      .to.match(/^[0-9a-f]{64}$/)
      .and.not.equal(account.authorizationSecret);
    await section.getByText('Authorization secret rotated.').waitFor();
    await screenshots(page, 'account-secret-rotated');
    expect((await new Widget({ ...account, authorizationSecret: secret }).signIn('customer-new').register()).status).to.equal(200);
    expect((await new Widget(account).signIn('customer-old').register()).status).to.equal(200);

    // The Service's signing secret rotates the same way.
    await page.getByRole('link', { name: 'Support' }).click();
    const signing = page.getByRole('region', { name: 'Signing secret' });
    await signing.getByRole('button', { name: 'Rotate signing secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate signing secret' }).getByRole('button', { name: 'Rotate secret' }).click();
    expect(await signing.getByLabel('New signing secret', { exact: true }).inputValue()).to.match(/^whsec_/);
    await signing.getByText('Signing secret rotated.').waitFor();
  });

  it('erases a user (GDPR) with a confirmation: rows and files gone', async () => {
    const { page } = browser();
    const hook = await receiver();
    const account = await createAccount();
    const service = await createService(account.id, { name: 'Support', webhookUrl: `${hook.url}/hook` });
    const widget = new Widget(account);
    const userId = (await widget.register({ type: 3 })).body.data.userId;
    const form = new FormData();
    form.append('media', new Blob([PNG], { type: 'image/png' }), 'photo.png');
    const upload = await fetch(`${widget.baseUrl}/media`, { method: 'POST', headers: widget.headers(), body: form });
    const media = ((await upload.json()) as { data: { media: string } }).data.media;
    expect((await widget.send({ media: { id: media, description: 'photo' } })).status).to.equal(200);
    expect((await widget.send('Please forget me')).status).to.equal(200);
    await hook.waitFor(2);
    await outboxSettled(service.id);
    const mediaDir = path.join(sharedServer().config.dataDir, 'media', String(account.id));
    expect(filesUnder(mediaDir)).to.have.length(1);

    await openDashboard(page, `#/accounts/${account.id}/conversations/${userId}`);
    await signIn(page);
    await page.getByRole('list', { name: 'Messages' }).getByText('Please forget me').waitFor();
    await page.getByRole('list', { name: 'Messages' }).getByRole('img', { name: 'photo.png' }).waitFor();
    await page.getByRole('button', { name: 'Delete user (GDPR)' }).click();
    await page.getByRole('dialog', { name: 'Delete user' }).getByRole('button', { name: 'Delete for good' }).click();
    await page.getByText('No conversations yet.').waitFor();

    const connection = sharedServer().deps.db.orm.em.fork().getConnection();
    const count = async (sql: string) => Number((await connection.execute<Array<{ n: string }>>(sql, [userId]))[0]?.n);
    expect(await count('select count(*) as n from users where id = ?')).to.equal(0);
    expect(await count('select count(*) as n from messages where user_id = ?')).to.equal(0);
    expect(await count('select count(*) as n from media where user_id = ?')).to.equal(0);
    expect(await count('select count(*) as n from devices where user_id = ?')).to.equal(0);
    expect(await count('select count(*) as n from deliveries where ordering_key = ?')).to.equal(0);
    expect(filesUnder(mediaDir)).to.deep.equal([]);
  });

  it('goes back to sign-in at once when the operator is disabled elsewhere (the live socket ends)', async () => {
    const { page } = browser();
    const account = await createAccount();
    const target = await newOperator([{ permission: 'conversations:read', accountId: account.id }]);
    await openDashboard(page);
    await signIn(page, target.email, target.password);
    const operators = await api().get<Array<{ id: number; email: string }>>('/adminApi/operators', { token: await adminToken() });
    const id = operators.body.data.find((o) => o.email === target.email)?.id;
    const disabled = await api().put(`/adminApi/operators/${id}/disabled`, { token: await adminToken(), json: { disabled: true } });
    expect(disabled.status).to.equal(200);
    // Nothing pressed on the page: the server ended its socket.
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).to.equal(0);
  });

  it('goes back to sign-in when the operator is disabled before the live socket is let in (the handshake refused)', async () => {
    // The order the test above leaves to chance: the page is signed in, the socket's handshake
    // reaches the server only after the operator is disabled, and the server refuses it.
    const { page } = browser();
    const account = await createAccount();
    const target = await newOperator([{ permission: 'conversations:read', accountId: account.id }]);
    let opened!: () => void;
    const opening = new Promise<void>((resolve) => (opened = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.routeWebSocket(/\/socket\.io\//, async (socket) => {
      opened();
      await released;
      socket.connectToServer();
    });
    await openDashboard(page);
    await signIn(page, target.email, target.password);
    await opening;
    const operators = await api().get<Array<{ id: number; email: string }>>('/adminApi/operators', { token: await adminToken() });
    const id = operators.body.data.find((o) => o.email === target.email)?.id;
    const disabled = await api().put(`/adminApi/operators/${id}/disabled`, { token: await adminToken(), json: { disabled: true } });
    expect(disabled.status).to.equal(200);
    release();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).to.equal(0);
  });

  it('disables an operator with a confirmation: their session ends and their sign-in fails with the reason; enabling lets them in', async () => {
    const { page } = browser();
    const target = await newOperator([{ permission: 'accounts:read', accountId: null }]);
    const theirToken = (await api().post<{ token: string }>('/adminApi/login', { json: target })).body.data.token;
    await openDashboard(page, '#/operators');
    await signIn(page);
    // The signed-in operator's own row offers no way to lock themselves out.
    const own = page.getByRole('row').filter({ hasText: TEST_ADMIN.email });
    await own.getByText('you').waitFor();
    expect(await own.getByRole('button', { name: /^(Disable|Enable) / }).count()).to.equal(0);

    const row = page.getByRole('row').filter({ hasText: target.email });
    await row.getByRole('button', { name: `Disable ${target.email}` }).click();
    // Cancelling changes nothing.
    await page.getByRole('dialog', { name: 'Disable operator' }).getByRole('button', { name: 'Cancel' }).click();
    await row.getByText('enabled', { exact: true }).waitFor();
    expect((await api().get('/adminApi/session', { token: theirToken })).status).to.equal(200);

    await row.getByRole('button', { name: `Disable ${target.email}` }).click();
    await page.getByRole('dialog', { name: 'Disable operator' }).getByRole('button', { name: 'Disable operator' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${target.email} disabled.` })
      .waitFor();
    await row.getByText('disabled', { exact: true }).waitFor();
    await row.getByRole('button', { name: `Enable ${target.email}` }).waitFor();
    expect((await api().get('/adminApi/session', { token: theirToken })).status).to.equal(401);
    await screenshots(page, 'operators');

    await page.getByRole('button', { name: 'Sign out' }).click();
    // The operators page has an Email field too: fill the sign-in form once it is there.
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(target.email);
    await page.getByLabel('Password').fill(target.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'This operator is disabled. Ask an operator who manages operators to enable you.' })
      .waitFor();
    await screenshots(page, 'sign-in-disabled');

    await signIn(page);
    await page.goto(`${sharedServer().url}/dashboard#/operators`);
    const again = page.getByRole('row').filter({ hasText: target.email });
    await again.getByRole('button', { name: `Enable ${target.email}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${target.email} enabled.` })
      .waitFor();
    await again.getByText('enabled', { exact: true }).waitFor();
    expect((await api().post('/adminApi/login', { json: target })).status).to.equal(200);
  });

  describe('operator accounts', () => {
    /** The code an authenticator app shows for this key, `steps` periods from now. */
    const codeFor = (key: string, steps = 0) =>
      new TOTP({ secret: Secret.fromBase32(key), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
        timestamp: Date.now() + steps * 30_000,
      });

    it('enrols in two-factor sign-in with the QR code on Your account, then signs in with the password and a code', async () => {
      const { page } = browser();
      const refused: string[] = [];
      page.on('console', (message) => {
        if (/Content.Security.Policy/i.test(message.text())) refused.push(message.text());
      });
      const operator = await newOperator([]);
      await openDashboard(page);
      await signIn(page, operator.email, operator.password);
      await page.getByRole('link', { name: 'Your account' }).click();
      await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
      await page.getByRole('heading', { name: 'Sessions' }).waitFor();
      await screenshots(page, 'your-account');
      await phoneShot(page, 'your-account');

      await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
      const qr = page.getByRole('img', { name: 'QR code to scan with your authenticator app' });
      await qr.waitFor();
      // Drawn from an object URL, which the page's CSP (img-src blob:) allows: it loaded.
      expect(await qr.getAttribute('src')).to.match(/^blob:/);
      await untilTrue(page, `document.querySelector('img.qr').complete && document.querySelector('img.qr').naturalWidth > 0`);
      const key = (await page.locator('.totp-secret').innerText()).replace(/\s/g, '');
      expect(key).to.match(/^[A-Z2-7]{32}$/);
      await screenshots(page, 'two-factor-enrol');
      await phoneShot(page, 'two-factor-enrol');

      await page.getByLabel('Code from the app').fill(codeFor(key));
      await page.getByRole('button', { name: 'Turn on' }).click();
      const codes = page.locator('ol.recovery-codes li');
      await codes.first().waitFor();
      expect(await codes.count()).to.equal(10);
      await screenshots(page, 'two-factor-recovery-codes');
      await page.getByRole('button', { name: 'I have kept them' }).click();
      await page.getByText('Recovery codes left: 10.').waitFor();

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await page.getByLabel('Email').fill(operator.email);
      await page.getByLabel('Password').fill(operator.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      // The password alone gave no session: the code is asked for.
      await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
      expect(await page.evaluate<number>('sessionStorage.length')).to.equal(0);
      await page.getByLabel('Authentication code').fill('000000' === codeFor(key, 1) ? '111111' : '000000');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor();
      await screenshots(page, 'sign-in-code');
      await phoneShot(page, 'sign-in-code');
      await page.getByLabel('Authentication code').fill(codeFor(key, 1));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      const token = await page.evaluate<string>(`sessionStorage.getItem('palaver.dashboard.token')`);
      const me = await api().get<{ email: string; twoFactor: { enabled: boolean } }>('/adminApi/session', { token });
      expect(me.body.data.email).to.equal(operator.email);
      expect(me.body.data.twoFactor.enabled).to.equal(true);
      expect(refused, 'nothing refused by the CSP').to.deep.equal([]);
    });

    it('changes the password and ends another session from Your account', async () => {
      const { page } = browser();
      const operator = await newOperator([]);
      const other = (
        await api().post<{ token: string }>('/adminApi/login', { json: operator, headers: { 'user-agent': 'Other Browser/1.0' } })
      ).body.data.token;
      await openDashboard(page, '#/me');
      await signIn(page, operator.email, operator.password);
      const row = page.getByRole('row').filter({ hasText: 'Other Browser/1.0' });
      await row.getByRole('button', { name: /^End the session from / }).click();
      await page.getByRole('status').filter({ hasText: 'Session ended.' }).waitFor();
      await row.waitFor({ state: 'detached' });
      expect((await api().get('/adminApi/session', { token: other })).status).to.equal(401);

      await page.getByLabel('Current password').fill(operator.password);
      await page.getByLabel('New password', { exact: true }).fill('password1234');
      await page.getByLabel('New password, again').fill('password1234');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('alert').filter({ hasText: 'most common passwords' }).waitFor();
      await page.getByLabel('New password', { exact: true }).fill('a better password, longer');
      await page.getByLabel('New password, again').fill('a better password, longer');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
      expect(
        (await api().post('/adminApi/login', { json: { email: operator.email, password: 'a better password, longer' } })).status,
      ).to.equal(200);
    });

    it('makes a password-reset link on the operators page, shown once, that sets a new password', async () => {
      const { page } = browser();
      const target = await newOperator([]);
      const theirToken = (await api().post<{ token: string }>('/adminApi/login', { json: target })).body.data.token;
      await openDashboard(page, '#/operators');
      await signIn(page);
      const row = page.getByRole('row').filter({ hasText: target.email });
      await row.getByRole('button', { name: `Password-reset link for ${target.email}` }).click();
      const link = await page.getByLabel('Password-reset link', { exact: true }).inputValue();
      expect(link).to.match(new RegExp(`^${sharedServer().url}/dashboard#/reset-password/prt_`));
      await page.getByText('Palaver sends no email').waitFor();
      await screenshots(page, 'operators-reset-link');
      await phoneShot(page, 'operators-reset-link');

      await row.getByRole('button', { name: `End sessions of ${target.email}` }).click();
      await page.getByRole('dialog', { name: 'End sessions' }).getByRole('button', { name: 'End sessions' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `1 session of ${target.email} ended.` })
        .waitFor();
      expect((await api().get('/adminApi/session', { token: theirToken })).status).to.equal(401);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await page.goto(link);
      await page.getByRole('heading', { name: 'Set a new password' }).waitFor();
      await screenshots(page, 'reset-password');
      await phoneShot(page, 'reset-password');
      await page.getByLabel('New password', { exact: true }).fill('set from the link');
      await page.getByLabel('New password, again').fill('set from the link');
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.getByRole('status').filter({ hasText: 'Password set. Sign in with it.' }).waitFor();
      expect(new URL(page.url()).hash).to.equal('');
      await signIn(page, target.email, 'set from the link');
    });
  });
});
