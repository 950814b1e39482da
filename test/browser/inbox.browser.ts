// The team inbox as a team uses it (issue #32): two operators in two browser contexts, a customer
// in Palaver's widget on another origin, and a bot Service on loopback that hands a conversation
// over and gets it back.
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import { useBrowser } from '../support/browser.ts';
import { DASHBOARD_SHOTS, expectAccessible, newOperator, openDashboard, signIn, untilTrue } from '../support/dashboard.ts';
import { adminToken, createAccount, createService } from '../support/factories.ts';
import { client } from '../support/http.ts';
import { receivedExactly } from '../support/outbox.ts';
import { Receiver } from '../support/receiver.ts';
import { sharedServer } from '../support/server.ts';
import { Widget } from '../support/widget.ts';
import { startWidgetHost } from '../support/widget-host.ts';

const api = () => client(sharedServer().url);

/** A minimal PDF: its type is decided by its first bytes. */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');

/**
 * An operator of the account with a display name and an avatar (set through the API, or in the
 * inbox page's form), signed in on a page of its own context.
 */
async function operator(
  context: BrowserContext,
  accountId: number,
  displayName: string,
  named: 'api' | 'page' = 'api',
): Promise<{ page: Page; email: string }> {
  const grants = ['accounts:read', 'conversations:read', 'conversations:reply', 'services:edit'].map((permission) => ({
    permission,
    accountId,
  }));
  const made = await newOperator(grants);
  const avatarUrl = `https://cdn.example/${displayName.split(' ')[0]!.toLowerCase()}.png`;
  if (named === 'api') {
    const login = await api().post<{ token: string }>('/adminApi/login', { json: made });
    expect(login.status, login.text).to.equal(200);
    const profile = await api().patch('/adminApi/session', { token: login.body.data.token, json: { displayName, avatarUrl } });
    expect(profile.status, profile.text).to.equal(200);
  }
  // Desktop notifications granted, and each one recorded, so that the test can see it was shown.
  await context.grantPermissions(['notifications'], { origin: sharedServer().url });
  await context.addInitScript(`{
    const shown = [];
    window.shownNotifications = shown;
    const Real = window.Notification;
    class Recorded extends Real {
      constructor(title, options) {
        super(title, options);
        shown.push(title + ': ' + (options && options.body ? options.body : ''));
      }
    }
    Object.defineProperty(window, 'Notification', { value: Recorded, configurable: true });
  }`);
  const page = await context.newPage();
  await openDashboard(page, `#/accounts/${accountId}/inbox`);
  await signIn(page, made.email, made.password);
  if (named === 'page') {
    await page.getByText(`Customers see you as: ${made.email.split('@')[0]!}`).click();
    await page.getByLabel('Your name for customers').fill(displayName);
    await page.getByLabel('Avatar (an https address)').fill(avatarUrl);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(`Customers see you as: ${displayName}`).waitFor();
  }
  return { page, email: made.email };
}

const shownNotifications = (page: Page) => page.evaluate<string[]>('window.shownNotifications');

describe('Team inbox (two operators, a customer, a bot)', function () {
  this.timeout(120_000);
  const browser = useBrowser();

  it('the customer writes → Unassigned for both, notified → A takes and answers (name, typing live) → B gets the 409 → note, resolve, reopened and unread', async () => {
    const { context } = browser();
    const account = await createAccount();
    const token = await adminToken();
    const shown = await api().get<{ inbox: { identification: string } }>(`/adminApi/accounts/${account.id}`, { token });
    const chosen = await api().put(`/adminApi/accounts/${account.id}/default-service`, {
      token,
      json: { serviceIdentification: shown.body.data.inbox.identification },
    });
    expect(chosen.status, chosen.text).to.equal(200);
    const otherContext = await context.browser()!.newContext();
    const site = await startWidgetHost(sharedServer().url, { account: account.identification, data: { title: 'Chat with Acme' } });
    try {
      const a = await operator(context, account.id, 'Ada Lovelace', 'page');
      const b = await operator(otherContext, account.id, 'Brian Kernighan');
      for (const { page } of [a, b]) {
        await page.getByRole('button', { name: 'Notify me of new messages' }).click();
        await page.getByText('Desktop notifications and sound are on.').waitFor();
        await page.getByText('No conversations here.').waitFor();
      }

      // The customer, in Palaver's widget on another origin.
      const customer = await (await context.browser()!.newContext()).newPage();
      await customer.goto(site.url);
      await customer.getByRole('button', { name: 'Open chat' }).click();
      const message = customer.getByRole('textbox', { name: 'Message' });
      await message.fill('Hello, is anyone there?');
      await message.press('Enter');

      // Unassigned for both, unread, with a desktop notification.
      for (const { page } of [a, b]) {
        const entry = page.getByRole('list', { name: 'Inbox conversations' }).getByRole('link', { name: /Anonymous user/ });
        await entry.getByText('1 unread').waitFor();
        await untilTrue(page, `document.title.startsWith('(1) Inbox')`);
        await untilTrue(page, `window.shownNotifications.includes('New message (unassigned): Hello, is anyone there?')`);
      }

      // B opens it with the keyboard (j), A with the mouse; A takes it.
      await b.page.keyboard.press('j');
      await b.page.getByRole('list', { name: 'Timeline' }).getByText('Hello, is anyone there?').waitFor();
      await a.page.getByRole('link', { name: /Anonymous user/ }).click();
      const timelineA = a.page.getByRole('list', { name: 'Timeline' });
      await timelineA.getByText('Hello, is anyone there?').waitFor();
      // B's page does not learn of A's claim before B claims (its timeline reads held): B claims on
      // what B saw, and gets the 409.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      await b.page.route(/\/timeline\?/, async (route) => {
        await held;
        await route.continue();
      });
      await a.page.getByRole('button', { name: 'Assign to me' }).click();
      await a.page.getByRole('button', { name: 'Unassign', exact: true }).waitFor();
      const claim = b.page.waitForResponse((r) => r.url().endsWith('/assignee'));
      await b.page.getByRole('button', { name: 'Assign to me' }).click();
      expect((await claim).status()).to.equal(409);
      release();
      await b.page.unroute(/\/timeline\?/);
      await b.page.getByRole('alert').getByText('Changed meanwhile: it is open, assigned to Ada Lovelace.').waitFor();
      await b.page.getByText('open · assigned to Ada Lovelace · owner Team inbox').waitFor();
      expect(await b.page.getByRole('button', { name: 'Unassign', exact: true }).count()).to.equal(0);

      // The customer's typing shows live for A (the inbox owns the conversation).
      await message.pressSequentially('And');
      await a.page.getByText('The customer is typing…').waitFor();

      // A answers (r focuses the reply box): the customer sees A's name and typing live.
      await a.page.keyboard.press('r');
      const reply = a.page.getByRole('textbox', { name: 'Reply' });
      expect(await a.page.evaluate('document.activeElement.name')).to.equal('reply');
      await reply.pressSequentially('Hi');
      await customer.getByText('Ada Lovelace is typing…').waitFor();
      await reply.pressSequentially(', Ada here. How can I help?');
      await reply.press('Enter');
      const log = customer.getByRole('log');
      await log.getByText('Hi, Ada here. How can I help?').waitFor();
      expect(await log.textContent()).to.include('Ada Lovelace');

      // A note: in both timelines by A's name, never in the widget.
      await a.page.getByRole('checkbox', { name: /Private note/ }).check();
      await reply.fill('Returning customer, be nice');
      await reply.press('Enter');
      await timelineA.getByText('Returning customer, be nice').waitFor();
      await b.page.getByText('Note by Ada Lovelace').waitFor();
      await a.page.getByRole('checkbox', { name: /Private note/ }).uncheck();
      expect(await log.textContent()).to.not.include('Returning customer');

      // A resolves with the keyboard (Escape leaves the reply box, e resolves).
      await reply.press('Escape');
      await a.page.keyboard.press('e');
      await a.page.getByRole('button', { name: 'Reopen' }).waitFor();
      await expectAccessible(a.page, 'inbox (two operators)');

      // Both back to their lists; the customer writes again: reopened, unread, A notified (A's).
      await a.page.evaluate(`location.hash = '#/accounts/${account.id}/inbox'`);
      await b.page.evaluate(`location.hash = '#/accounts/${account.id}/inbox'`);
      await a.page.getByRole('button', { name: 'Mine' }).click();
      await a.page.getByText('No conversations here.').waitFor();
      await b.page.getByRole('button', { name: 'All open' }).click();
      await b.page.getByText('No conversations here.').waitFor();
      await message.fill('One more question');
      await message.press('Enter');
      for (const { page } of [a, b]) {
        const entry = page.getByRole('list', { name: 'Inbox conversations' }).getByRole('link', { name: /Anonymous user/ });
        await entry.getByText('1 unread').waitFor();
        await entry.getByText(/open · Team inbox/).waitFor();
      }
      await untilTrue(a.page, `window.shownNotifications.includes('New message: One more question')`);
      // The list alone on a phone.
      await a.page.setViewportSize({ width: 390, height: 800 });
      await a.page.screenshot({ path: `${DASHBOARD_SHOTS}/inbox-team-list-390.png`, fullPage: true });
      await expectAccessible(a.page, 'inbox list (390 px)');
      await a.page.setViewportSize({ width: 1280, height: 900 });
      expect(await shownNotifications(b.page)).to.not.include('New message: One more question');
      await a.page.getByRole('link', { name: /Anonymous user/ }).click();
      await a.page.getByRole('button', { name: 'Resolve', exact: true }).waitFor();
      await a.page.getByRole('list', { name: 'Timeline' }).getByText('One more question').waitFor();
      await a.page.getByText('The customer is typing…').waitFor({ state: 'hidden' });
      for (const width of [1280, 768, 390]) {
        await a.page.setViewportSize({ width, height: 900 });
        await a.page.screenshot({ path: `${DASHBOARD_SHOTS}/inbox-team-${width}.png`, fullPage: true });
      }
      await a.page.setViewportSize({ width: 1280, height: 900 });
      expect(await shownNotifications(a.page)).to.include('New message (unassigned): Hello, is anyone there?');
    } finally {
      await site.close();
      await otherContext.close();
    }
  });

  it('an operator attaches a file to an answer from the composer; the customer gets it as a message with media', async () => {
    const { context } = browser();
    const account = await createAccount();
    const token = await adminToken();
    const shown = await api().get<{ inbox: { identification: string; id: number } }>(`/adminApi/accounts/${account.id}`, { token });
    const chosen = await api().put(`/adminApi/accounts/${account.id}/default-service`, {
      token,
      json: { serviceIdentification: shown.body.data.inbox.identification },
    });
    expect(chosen.status, chosen.text).to.equal(200);
    const widget = new Widget({ ...account, defaultServiceId: shown.body.data.inbox.id });
    const userId = (await widget.register()).body.data.userId;
    expect((await widget.send('Can you send me the invoice?')).status).to.equal(200);
    const a = await operator(context, account.id, 'Ada Lovelace');
    await a.page.goto(`${sharedServer().url}/dashboard#/accounts/${account.id}/inbox/${userId}`);
    await a.page.getByRole('list', { name: 'Timeline' }).getByText('Can you send me the invoice?').waitFor();
    await a.page.getByLabel('Attach a file').setInputFiles({ name: 'invoice.pdf', mimeType: 'application/pdf', buffer: PDF });
    await a.page.getByLabel('Reply').fill('Here it is.');
    await a.page.getByRole('button', { name: 'Send', exact: true }).click();
    await a.page.getByRole('list', { name: 'Timeline' }).getByText('Here it is.').waitFor();
    expect(await a.page.getByLabel('Attach a file').inputValue(), 'the picker is emptied once sent').to.equal('');

    const answer = (await widget.messages()).body.data.find((m) => m.typeId === 2);
    expect(answer?.message).to.equal('Here it is.');
    expect(answer?.media?.['mimeType']).to.equal('application/pdf');
    expect(answer?.media?.['filename']).to.match(/\.pdf$/);
  });

  it('a bot hands a conversation over (PUT /serviceApi/v2.3/users/{id}/owner) → Unassigned; A hands it back → the bot gets the next message', async () => {
    const { page } = browser();
    const receiver = await Receiver.start();
    try {
      const account = await createAccount();
      const bot = await createService(account.id, { name: 'Helpbot', webhookUrl: `${receiver.url}/hook` });
      const shown = await api().get<{ inbox: { identification: string } }>(`/adminApi/accounts/${account.id}`, {
        token: await adminToken(),
      });
      const widget = new Widget({ ...account, defaultServiceId: bot.id });
      const userId = (await widget.register()).body.data.userId;
      expect((await widget.send('I need a human')).status).to.equal(200);
      await receivedExactly(receiver, bot.id, 1);

      await openDashboard(page, `#/accounts/${account.id}/inbox`);
      await signIn(page);
      await page.getByText('No conversations here.').waitFor();
      // The empty view points at the bots' conversations, where this one is until it is handed over.
      await page.getByRole('button', { name: "Show the bots' conversations" }).click();
      await page
        .getByRole('list', { name: 'Inbox conversations' })
        .getByRole('link', { name: /Anonymous user/ })
        .waitFor();
      await page.getByRole('button', { name: 'Unassigned', exact: true }).click();
      await page.getByText('No conversations here.').waitFor();
      const handed = await api().put(`/serviceApi/v2.3/users/${userId}/owner`, {
        token: bot.apiKey,
        json: { serviceIdentification: shown.body.data.inbox.identification },
      });
      expect(handed.status, handed.text).to.equal(200);
      const entry = page.getByRole('list', { name: 'Inbox conversations' }).getByRole('link', { name: /Anonymous user/ });
      await entry.waitFor();
      await entry.click();
      await page.getByRole('list', { name: 'Timeline' }).getByText('I need a human').waitFor();
      await page.getByLabel('Hand back to').selectOption({ label: 'Helpbot' });
      await page.getByRole('button', { name: 'Hand over' }).click();
      await page.getByRole('button', { name: 'Take over' }).waitFor();
      await page.getByText('No conversations here.').waitFor();

      expect((await widget.send('thanks, bot again')).status).to.equal(200);
      const received = await receivedExactly(receiver, bot.id, 4);
      const bodies = received.map((r) => r.json as { body?: { action?: string }; message?: string });
      expect(bodies.map((b) => b.body?.action ?? b.message)).to.deep.equal([
        'I need a human',
        'changeOwner',
        'changeOwner',
        'thanks, bot again',
      ]);
    } finally {
      await receiver.close();
    }
  });
});
