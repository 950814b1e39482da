// Palaver's chat widget in a real Chromium, embedded with its one script tag on a site of another
// origin, talking to a real Palaver and a loopback Service: live answers without polling, several
// devices and a login merge, a network drop, uploads (and a file after a reload under exactly the
// policy docs/widget.md prints), typing both ways, the unread badge, the keyboard (focus kept in
// the composer after Send or a quick reply), an accessibility check, the prompt of an empty
// conversation, the unavailable state of a snippet or an account set up wrong, seen marks after
// failures, and a visitor whose user an operator erased. Screenshots go to docs/images/ (the README shows one); those of states
// only checked by eye to $WIDGET_SHOTS (default: the temporary directory's w-shots).
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Page, Request } from 'playwright-core';
import { useBrowser } from '../support/browser.ts';
import { adminToken } from '../support/factories.ts';
import { client } from '../support/http.ts';
import { sharedServer } from '../support/server.ts';
import { tenant, type Tenant } from '../support/tenant.ts';
import { authFor } from '../support/widget.ts';
import {
  documentedPolicy,
  expectWidgetAccessible,
  startWidgetHost,
  type WidgetHost,
  type WidgetHostOptions,
} from '../support/widget-host.ts';
import { pdf, png } from './files.ts';

const IMAGES = path.resolve(import.meta.dirname, '..', '..', 'docs', 'images');
/** Screenshots of states that are checked by eye, not published. */
const SHOTS = process.env.WIDGET_SHOTS ?? path.join(os.tmpdir(), 'w-shots');
const TITLE = 'Chat with Acme';
const UNAVAILABLE = 'Sorry, the chat is not available at the moment.';
const EMPTY_PROMPT = "Send us a message and we'll get back to you here.";

// In-page functions (this suite is typed without the DOM library). Focus inside a Shadow DOM is
// the shadow root's activeElement (document.activeElement is the host).
type InPage = { getRootNode(): unknown; contains(node: unknown): boolean };
const FOCUSED = (el: InPage) => (el.getRootNode() as { activeElement: unknown }).activeElement === el;
const HOLDS_FOCUS = (dialog: InPage) => dialog.contains((dialog.getRootNode() as { activeElement: unknown }).activeElement);

interface MessagePayload {
  type: string;
  message: string;
  typeId: number;
  user: { id: string };
}

describe('chat widget (Chromium)', function () {
  this.timeout(90_000);
  const browser = useBrowser();
  let t: Tenant;
  const hosts: WidgetHost[] = [];

  beforeEach(async () => {
    t = await tenant();
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.close();
    await t.receiver.close();
  });

  async function host(options: Partial<WidgetHostOptions> = {}): Promise<WidgetHost> {
    const started = await startWidgetHost(sharedServer().url, { account: t.account.identification, data: { title: TITLE }, ...options });
    hosts.push(started);
    return started;
  }

  const widget = (page: Page) => ({
    launcher: page.getByRole('button', { name: 'Open chat' }),
    dialog: page.getByRole('dialog', { name: TITLE }),
    log: page.getByRole('log'),
    textbox: page.getByRole('textbox', { name: 'Message' }),
    send: page.getByRole('button', { name: 'Send', exact: true }),
    close: page.getByRole('button', { name: 'Close chat' }),
  });

  /** The Service's webhook deliveries of the given type so far. */
  const payloads = (type: string) => t.receiver.requests.map((r) => r.json as MessagePayload).filter((p) => p.type === type);

  async function waitForPayload(predicate: (p: MessagePayload) => boolean): Promise<MessagePayload> {
    for (let i = 0; i < 300; i++) {
      const found = t.receiver.requests.map((r) => r.json as MessagePayload).find((p) => p && predicate(p));
      if (found) return found;
      await t.receiver.waitFor(t.receiver.requests.length + 1, 100).catch(() => undefined);
    }
    throw new Error('the Service never received the expected delivery');
  }

  async function agentSays(userId: string, message: string, agent = { id: 7, name: 'Ada Agent' }): Promise<void> {
    const answer = await client(sharedServer().url).post(`/serviceApi/v2.3/users/${userId}/messages`, {
      token: t.service.apiKey,
      json: { message, agent },
    });
    expect(answer.status, answer.text).to.equal(201);
  }

  /** The texts of the agent's messages in the log, in the order shown. */
  const agentTexts = (page: Page) => page.locator('li.msg.agent .bubble').allInnerTexts();

  async function openAndSend(page: Page, text: string): Promise<string> {
    await widget(page).launcher.click();
    return sendInOpenChat(page, text);
  }
  /** Sends in the open chat; resolves with the user id the Service got it for, once it shows as sent. */
  async function sendInOpenChat(page: Page, text: string): Promise<string> {
    const w = widget(page);
    await w.textbox.fill(text);
    await w.textbox.press('Enter');
    const payload = await waitForPayload((p) => p.type === 'message' && p.message === text);
    await w.log.getByText(text).waitFor();
    await page.locator('li.msg.pending').waitFor({ state: 'detached' });
    return payload.user.id;
  }

  it('chats live with a Service on a site of another origin under a strict CSP, with no polling', async () => {
    const site = await host({ strictCsp: true });
    const { page, context } = browser();
    await page.setViewportSize({ width: 1280, height: 800 });
    const pageLoads: string[] = [];
    context.on('request', (request: Request) => {
      const url = new URL(request.url());
      if (request.method() === 'GET' && /\/messages(\/(before|after):\d+)?$/.test(url.pathname)) pageLoads.push(url.pathname);
    });
    await page.goto(site.url);
    const w = widget(page);
    await w.launcher.waitFor();
    // A new visitor costs nothing until the chat is used: no device, no conversation.
    expect(pageLoads).to.deep.equal([]);

    const userId = await openAndSend(page, 'Hello! Do you ship tents to Norway?');
    const [message] = payloads('message');
    expect(message).to.include({ type: 'message', typeId: 1, message: 'Hello! Do you ship tents to Norway?' });
    // Sent once the socket is up, which may be after the first message went over REST.
    await waitForPayload((p) => p.type === 'event' && (p as unknown as { body: { name: string } }).body.name === 'chatOpened');

    await agentSays(userId, 'Yes, we ship to Norway in 3 to 5 days.');
    await w.log.getByText('Yes, we ship to Norway in 3 to 5 days.').waitFor();
    await agentSays(userId, 'Anything else I can help with?');
    await w.log.getByText('Anything else I can help with?').waitFor();
    expect(await page.locator('li.msg.agent .author').first().innerText()).to.equal('Ada Agent');
    // The header names the current agent.
    await page.getByRole('dialog').getByText('Ada Agent', { exact: true }).first().waitFor();

    // One page at the start; everything after came over the socket.
    expect(pageLoads).to.deep.equal(['/clientApi/v1.9/messages']);
    expect(
      browser().console.filter((line) => /Content Security Policy|Refused to/.test(line)),
      'CSP violations',
    ).to.deep.equal([]);
    await page.screenshot({ path: path.join(IMAGES, 'widget-conversation.png') });
  });

  it("shows two devices of one registered user each other's messages live, and merges an anonymous conversation at login", async () => {
    const authorization = authFor(t.account, 'customer-4711');
    const site = await host();
    const laptop = browser().page;
    await laptop.goto(site.url);
    // Anonymous first, then login(): the conversation so far comes along.
    await openAndSend(laptop, 'Before I log in');
    await laptop.evaluate(`window.Palaver.login(${JSON.stringify(authorization)})`);
    await widget(laptop).log.getByText('Before I log in').waitFor();

    // The same customer on a second device (its own browser context), signed in from the start.
    const phoneContext = await laptop.context().browser()!.newContext();
    try {
      const phone = await phoneContext.newPage();
      const phoneSite = await host({ settings: { authorization } });
      await phone.goto(phoneSite.url);
      await widget(phone).launcher.click();
      await widget(phone).log.getByText('Before I log in').waitFor();

      await widget(phone).textbox.fill('Sent from my phone');
      await widget(phone).textbox.press('Enter');
      await widget(laptop).log.getByText('Sent from my phone').waitFor();

      await widget(laptop).textbox.fill('And this from the laptop');
      await widget(laptop).send.click();
      await widget(phone).log.getByText('And this from the laptop').waitFor();

      // Every message once on each device.
      for (const page of [laptop, phone]) {
        const visitor = await page.locator('li.msg.visitor:not(.pending) .bubble').allInnerTexts();
        expect(visitor).to.deep.equal(['Before I log in', 'Sent from my phone', 'And this from the laptop']);
      }
    } finally {
      await phoneContext.close();
    }
  });

  it('follows a login and a logout made in another tab of the site: what it sends next goes to the right conversation', async () => {
    const authorization = authFor(t.account, 'customer-two-tabs');
    const site = await host();
    const first = browser().page;
    await first.goto(site.url);
    const anonymousId = await openAndSend(first, 'From the first tab');
    // The same browser: a second tab shares the device (localStorage).
    const second = await first.context().newPage();
    await second.goto(site.url);
    await widget(second).launcher.click();
    await widget(second).log.getByText('From the first tab').waitFor();

    await first.evaluate(`window.Palaver.login(${JSON.stringify(authorization)})`);
    await widget(first).log.getByText('From the first tab').waitFor();
    const signedIn = await sendInOpenChat(second, 'Second tab, signed in');
    expect(signedIn, 'the registered conversation, not the anonymous one it merged').to.not.equal(anonymousId);

    await first.evaluate(`window.Palaver.logout()`);
    await widget(second).log.getByText('From the first tab').waitFor({ state: 'detached' });
    const afterLogout = await sendInOpenChat(second, 'Second tab, signed out');
    expect(afterLogout, 'a new anonymous conversation').to.not.be.oneOf([anonymousId, signedIn]);
    expect(await widget(second).log.getByText('Second tab, signed in').count(), "the customer's conversation is not shown").to.equal(0);
  });

  it('shows all 20 messages sent during a network drop once, in order, without a reload', async () => {
    const site = await host();
    const { page, context } = browser();
    await page.goto(site.url);
    const userId = await openAndSend(page, 'I will be on a train');

    await context.setOffline(true);
    await page
      .getByRole('status')
      .filter({ hasText: /offline|Reconnecting/ })
      .waitFor();
    const texts = Array.from({ length: 20 }, (_, i) => `Update ${i + 1} of 20`);
    for (const text of texts) await agentSays(userId, text);
    // The visitor writes while offline too: it goes out when the connection is back, once.
    await widget(page).textbox.fill('Written in a tunnel');
    await widget(page).textbox.press('Enter');
    await context.setOffline(false);

    await widget(page).log.getByText('Update 20 of 20').waitFor();
    await page.locator('li.msg.pending').waitFor({ state: 'detached' });
    await page
      .getByRole('status')
      .filter({ hasText: /offline|Reconnecting/ })
      .waitFor({ state: 'hidden' });
    expect(await agentTexts(page)).to.deep.equal(texts);
    await waitForPayload((p) => p.type === 'message' && p.message === 'Written in a tunnel');
    const stored = await client(sharedServer().url).get<Array<{ message: string }>>(`/serviceApi/v2.3/users/${userId}/messages`, {
      token: t.service.apiKey,
    });
    expect(
      stored.body.data.filter((m) => m.message === 'Written in a tunnel'),
      'the offline message, stored once',
    ).to.have.length(1);
  });

  it("shows a message of cards without an empty bubble, names each card's button after its card, and stays at the newest once the picture loaded", async () => {
    const site = await host();
    const { page } = browser();
    await page.goto(site.url);
    const userId = await openAndSend(page, 'Which delivery can I have?');
    for (let i = 1; i <= 8; i++) await agentSays(userId, `Let me look into it (${i})`);
    await widget(page).log.getByText('Let me look into it (8)').waitFor();
    const form = new FormData();
    form.append('media', new Blob([png(160)], { type: 'image/png' }), 'standard.png');
    const upload = await fetch(`${sharedServer().url}/serviceApi/v2.3/users/${userId}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.service.apiKey}` },
      body: form,
    });
    expect(upload.status).to.equal(201);
    const mediaId = ((await upload.json()) as { data: { media: string } }).data.media;
    const sent = await client(sharedServer().url).post(`/serviceApi/v2.3/users/${userId}/messages`, {
      token: t.service.apiKey,
      json: {
        carousel: [
          {
            title: 'Standard',
            message: '3–5 days, free',
            media: { id: mediaId },
            buttons: [{ title: 'Choose', payload: 'standard', type: 'reply' }],
          },
          { title: 'Express', message: '1 day, 9 EUR', buttons: [{ title: 'Choose', payload: 'express', type: 'reply' }] },
        ],
        agent: { id: 7, name: 'Ada Agent' },
      },
    });
    expect(sent.status, sent.text).to.equal(201);

    const cards = page.getByRole('group', { name: 'Options: scroll sideways for more' });
    await cards.waitFor();
    expect(await page.locator('li.msg.agent:has(.carousel) .bubble').count(), 'no empty bubble above the cards').to.equal(0);
    expect(await cards.getAttribute('tabindex'), 'scrolled with the keyboard').to.equal('0');
    await cards.getByRole('button', { name: 'Choose: Standard' }).waitFor();
    await cards.getByRole('button', { name: 'Choose: Express' }).waitFor();
    await page.waitForFunction(`(() => {
      const root = document.querySelector('[data-palaver-widget]').shadowRoot;
      const img = root.querySelector('.carousel img');
      const log = root.querySelector('.log');
      return img && img.complete && img.naturalWidth > 0 && log.scrollHeight - log.scrollTop - log.clientHeight < 2;
    })()`);
    await shoot(page, 'carousel');

    await cards.getByRole('button', { name: 'Choose: Express' }).click();
    await waitForPayload((p) => p.type === 'message' && p.message === 'express');
  });

  it("does not ask again for an agent's avatar once it failed to load: the initials stand in", async () => {
    const site = await host();
    const { page } = browser();
    const asked: string[] = [];
    await page.route('https://avatars.example/**', async (route) => {
      asked.push(route.request().url());
      await route.fulfill({ status: 404, body: '' });
    });
    await page.goto(site.url);
    const userId = await openAndSend(page, 'Hello?');
    const agent = { id: 9, name: 'Bea', avatar: 'https://avatars.example/bea.png' };
    await agentSays(userId, 'Answer 1', agent);
    // The initials show once the failure is known (images rendered before that were already asked for).
    await page.locator('span.avatar').first().waitFor();
    const before = asked.length;
    expect(before).to.be.within(1, 2);
    // Every message redraws the conversation (its header shows the agent): nothing is asked again.
    for (let i = 2; i <= 4; i++) await agentSays(userId, `Answer ${i}`, agent);
    await widget(page).log.getByText('Answer 4').waitFor();
    expect(asked).to.have.length(before);
    expect(new Set(asked)).to.deep.equal(new Set(['https://avatars.example/bea.png']));
  });

  it('uploads an image and a PDF, and shows them as a preview and a named link', async () => {
    const site = await host();
    const { page } = browser();
    await page.goto(site.url);
    await openAndSend(page, 'Here are the photos');
    const files = page.locator('input[type="file"]');
    await files.setInputFiles({ name: 'tent.png', mimeType: 'image/png', buffer: png(64) });
    await files.setInputFiles({ name: 'receipt.pdf', mimeType: 'application/pdf', buffer: pdf() });
    const images = await Promise.all([
      waitForPayload((p) => p.type === 'message' && /\{\{img\/.*\.png\}\}/.test(p.message)),
      waitForPayload((p) => p.type === 'message' && /\{\{img\/.*\.pdf\}\}/.test(p.message)),
    ]);
    expect(images).to.have.length(2);
    await page.locator('li.msg.pending').waitFor({ state: 'detached' });
    const preview = page.getByRole('img', { name: 'tent.png' });
    await preview.waitFor();
    await page.waitForFunction(`(() => {
      const img = document.querySelector('[data-palaver-widget]').shadowRoot.querySelector('img.image');
      return img && img.complete && img.naturalWidth > 0;
    })()`);
    const link = page.getByRole('link', { name: /receipt\.pdf/ });
    await link.waitFor();
    expect(await link.getAttribute('download')).to.equal('receipt.pdf');
    expect(await link.getAttribute('href')).to.match(/^blob:/);
  });

  it('keeps to the documented Content-Security-Policy with a PDF after a reload: no violation, no error, the file named with its size', async () => {
    const site = await host({ policy: documentedPolicy(sharedServer().url) });
    const { page } = browser();
    // Recorded by the page itself: a refusal the console might word differently still counts.
    await page.addInitScript(`window.violations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.effectiveDirective + ' ' + e.blockedURI));`);
    await page.goto(site.url);
    await openAndSend(page, 'My receipt');
    await page.locator('input[type="file"]').setInputFiles({ name: 'receipt.pdf', mimeType: 'application/pdf', buffer: pdf() });
    await waitForPayload((p) => p.type === 'message' && /\{\{img\/.*\.pdf\}\}/.test(p.message));
    await page.locator('li.msg.pending').waitFor({ state: 'detached' });
    const size = `${pdf().length} B`;
    const link = page.getByRole('link', { name: /receipt\.pdf/ });
    await link.getByText(size).waitFor();

    // After the reload the file is no longer in the page: it comes from Palaver, with its size.
    await page.reload();
    await widget(page).launcher.click();
    await widget(page).log.getByText('My receipt').waitFor();
    await link.waitFor();
    await page.waitForFunction(`(() => {
      const a = document.querySelector('[data-palaver-widget]').shadowRoot.querySelector('a.file');
      return a && a.href.startsWith('blob:');
    })()`);
    await link.getByText(size).waitFor({ timeout: 5000 });
    expect(await link.getAttribute('download')).to.equal('receipt.pdf');
    expect(await link.getAttribute('title')).to.equal('Download receipt.pdf');
    expect(await link.locator('.name').innerText()).to.equal('receipt.pdf');
    await shoot(page, 'file-after-reload');

    // Anything that was still to go wrong has had a round trip of the page's own to do so.
    await page.evaluate(`fetch('/site.css').then(() => true)`);
    expect(await page.evaluate<string[]>('window.violations'), 'CSP violations').to.deep.equal([]);
    const errors = browser().console.filter((line) => /^(error|pageerror):/.test(line));
    expect(errors, 'console errors and uncaught errors').to.deep.equal([]);
  });

  it('offers no Retry for a file Palaver refuses for good, only Remove, which drops it', async () => {
    const site = await host();
    const { page } = browser();
    await page.goto(site.url);
    await openAndSend(page, 'Here is the program');
    await page.locator('input[type="file"]').setInputFiles({
      name: 'setup.exe',
      mimeType: 'application/octet-stream',
      buffer: Buffer.concat([Buffer.from('MZ'), Buffer.alloc(510, 0x90)]),
    });
    const failed = page.locator('li.msg.pending', { hasText: 'setup.exe' });
    await failed.getByText('This kind of file cannot be sent.').waitFor();
    expect(await failed.getByRole('button', { name: 'Retry' }).count(), 'no Retry that could only fail').to.equal(0);
    await shoot(page, 'refused-file');

    await failed.getByRole('button', { name: 'Remove' }).click();
    await failed.waitFor({ state: 'detached' });
    expect(await widget(page).textbox.evaluate(FOCUSED), 'focus back in the text box').to.equal(true);
    await widget(page).log.getByText('Here is the program').waitFor();
    await shoot(page, 'refused-file-removed');
  });

  it("sends the visitor's typing and shows the agent's", async () => {
    const site = await host();
    const { page } = browser();
    await page.goto(site.url);
    const userId = await openAndSend(page, 'Hi');
    const eventNames = () => payloads('event').map((p) => (p as unknown as { body: { name: string } }).body.name);

    await widget(page).textbox.pressSequentially('I am typing');
    await waitForPayload((p) => p.type === 'event' && (p as unknown as { body: { name: string } }).body.name === 'startTyping');
    // Idle for a moment: the widget says the visitor stopped.
    await waitForPayload((p) => p.type === 'event' && (p as unknown as { body: { name: string } }).body.name === 'stopTyping');
    expect(eventNames().filter((n) => n === 'startTyping')).to.have.length(1);

    const typing = (isTyping: boolean) =>
      client(sharedServer().url).post(`/serviceApi/v2.3/users/${userId}/typing`, {
        token: t.service.apiKey,
        json: { isTyping, agent: { id: 7, name: 'Ada Agent' } },
      });
    expect((await typing(true)).status).to.equal(200);
    await page.getByText('Ada Agent is typing…').waitFor();
    expect((await typing(false)).status).to.equal(200);
    await page.getByText('Ada Agent is typing…').waitFor({ state: 'detached' });
  });

  it('counts unread agent messages on the launcher while closed, and marks them seen when opened', async () => {
    const site = await host();
    const { page } = browser();
    await page.goto(site.url);
    const userId = await openAndSend(page, 'Call me back later');
    await page.evaluate(`window.unreadSeen = []; window.Palaver.on('unread', (count) => window.unreadSeen.push(count));`);
    await widget(page).close.click();
    await agentSays(userId, 'Sure, one moment.');
    await agentSays(userId, 'We will call you at 3 pm.');
    const badge = page.locator('.badge');
    await page.waitForFunction(`document.querySelector('[data-palaver-widget]').shadowRoot.querySelector('.badge').textContent === '2'`);
    expect(await badge.isVisible()).to.equal(true);
    await page.getByText('2 unread messages').waitFor({ state: 'attached' });
    expect(await page.evaluate('window.unreadSeen.at(-1)')).to.equal(2);

    await widget(page).launcher.click();
    await badge.waitFor({ state: 'hidden' });
    // Seen on the server: the Service reads status 4 on both agent messages.
    await waitForSeen(userId);
  });

  it('names each agent of a run when a bot and an operator share an agent id (told apart by name and avatar too)', async () => {
    const site = await host();
    const { page } = browser();
    await page.goto(site.url);
    const userId = await openAndSend(page, 'Can a person help me?');
    await agentSays(userId, 'Let me find a colleague.', { id: 1, name: 'Demo bot' });
    await agentSays(userId, 'Hi, Ann here from the team.', { id: 1, name: 'Ann' });
    await agentSays(userId, 'What can I do for you?', { id: 1, name: 'Ann' });
    await widget(page).log.getByText('What can I do for you?').waitFor();
    // The operator's answers start a run of their own, named; Ann's second message follows hers.
    expect(await page.locator('li.msg.agent:not(.follows)').count()).to.equal(2);
    expect(await page.locator('li.msg.agent.follows').count()).to.equal(1);
    expect(await page.locator('li.msg.agent:not(.follows) .author').allInnerTexts()).to.deep.equal(['Demo bot', 'Ann']);
  });

  /** Waits until the Service reads every agent message as seen (status 4). */
  async function waitForSeen(userId: string): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const stored = await client(sharedServer().url).get<Array<{ typeId: number; status: number }>>(
        `/serviceApi/v2.3/users/${userId}/messages`,
        { token: t.service.apiKey },
      );
      if (stored.body.data.filter((m) => m.typeId === 2).every((m) => m.status === 4)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the agent messages were never marked seen');
  }

  /** The page's calls marking messages seen (PUT /messages/status/4), counted as the browser sends them. */
  function seenCalls(page: Page): () => number {
    let count = 0;
    page.on('request', (request: Request) => {
      if (request.method() === 'PUT' && request.url().endsWith('/clientApi/v1.9/messages/status/4')) count++;
    });
    return () => count;
  }

  it('tries marking seen again later after a passing failure, and it succeeds', async () => {
    const site = await host();
    const { page } = browser();
    const seen = seenCalls(page);
    let failed = 0;
    await page.route('**/clientApi/v1.9/messages/status/4', async (route) => {
      if (failed++ > 0) return route.continue();
      await route.fulfill({
        status: 500,
        contentType: 'application/json',
        body: JSON.stringify({ data: null, notifications: [{ type: 'error', message: 'internal_error' }], status: 'ERROR' }),
      });
    });
    await page.goto(site.url);
    const userId = await openAndSend(page, 'Anyone?');
    await widget(page).close.click();
    await agentSays(userId, 'Yes, Ada here.');
    await page.locator('.badge').filter({ hasText: '1' }).waitFor();
    await widget(page).launcher.click();
    await waitForSeen(userId);
    expect(seen(), 'one failed call and one that succeeded').to.equal(2);
  });

  it('stops marking seen, and says the chat is unavailable, when the account stops allowing the page', async () => {
    const site = await host();
    const { page } = browser();
    const calls = palaverCalls(page);
    const seen = seenCalls(page);
    await page.clock.install();
    await page.goto(site.url);
    const userId = await openAndSend(page, 'Still there?');
    await widget(page).close.click();
    await agentSays(userId, 'Back in a minute.');
    await page.locator('.badge').filter({ hasText: '1' }).waitFor();
    const refused = await client(sharedServer().url).patch(`/adminApi/accounts/${t.account.id}`, {
      token: await adminToken(),
      json: { allowedOrigins: ['https://shop.example'] },
    });
    expect(refused.status, refused.text).to.equal(200);
    await widget(page).launcher.click();
    await expectUnavailable(page, calls, 'origin_not_allowed', t.account.identification);
    expect(seen(), 'calls marking seen').to.equal(1);
    await shoot(page, 'seen-refused-unavailable');
  });

  it('works with the keyboard alone: Enter sends, Shift+Enter breaks lines, Tab stays in the dialog, Escape closes', async () => {
    const site = await host();
    const { page } = browser();
    await page.goto(site.url);
    const w = widget(page);
    await w.launcher.waitFor();
    // From the page's own button, the next Tab reaches the launcher.
    await page.locator('#site-button').focus();
    await page.keyboard.press('Tab');
    expect(await w.launcher.evaluate(FOCUSED), 'focus on the launcher').to.equal(true);
    await page.keyboard.press('Enter');
    await w.dialog.waitFor();
    expect(await w.textbox.evaluate(FOCUSED), 'focus in the message box').to.equal(true);

    await page.keyboard.type('First line');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('second line');
    await page.keyboard.press('Enter');
    await waitForPayload((p) => p.type === 'message' && p.message === 'First line\nsecond line');

    // Tab and Shift+Tab cycle through the dialog's controls and never leave it.
    for (const key of ['Tab', 'Tab', 'Tab', 'Tab', 'Tab', 'Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab']) {
      await page.keyboard.press(key);
      const inside = await w.dialog.evaluate(HOLDS_FOCUS);
      expect(inside, `focus inside the dialog after ${key}`).to.equal(true);
    }
    await page.keyboard.press('Escape');
    await w.dialog.waitFor({ state: 'hidden' });
    expect(await w.launcher.evaluate(FOCUSED), 'focus back on the launcher').to.equal(true);
  });

  it('keeps focus in the composer after sending with the Send button, so that Escape still closes the chat', async () => {
    const site = await host();
    const { page } = browser();
    await page.goto(site.url);
    const w = widget(page);
    await w.launcher.click();
    await w.textbox.fill('Sent with the mouse');
    await w.send.click();
    await waitForPayload((p) => p.type === 'message' && p.message === 'Sent with the mouse');
    await page.locator('li.msg.pending').waitFor({ state: 'detached' });
    expect(await w.send.isDisabled(), 'Send disabled with nothing to send').to.equal(true);
    expect(await w.textbox.evaluate(FOCUSED), 'focus in the message box').to.equal(true);
    await shoot(page, 'sent-with-mouse');

    await page.keyboard.press('Escape');
    await w.dialog.waitFor({ state: 'hidden' });
    expect(await w.launcher.evaluate(FOCUSED), 'focus back on the launcher').to.equal(true);
  });

  it('keeps focus in the composer after a quick reply, which is gone once used', async () => {
    const site = await host();
    const { page } = browser();
    await page.goto(site.url);
    const userId = await openAndSend(page, 'Can I change my order?');
    const asked = await client(sharedServer().url).post(`/serviceApi/v2.3/users/${userId}/messages`, {
      token: t.service.apiKey,
      json: { message: 'Which part?', quickReplies: ['The address', 'The size'], agent: { id: 7, name: 'Ada Agent' } },
    });
    expect(asked.status, asked.text).to.equal(201);
    const w = widget(page);
    await page.getByRole('button', { name: 'The size' }).waitFor();
    await shoot(page, 'quick-replies');
    await page.getByRole('button', { name: 'The size' }).click();
    await waitForPayload((p) => p.type === 'message' && p.message === 'The size');
    await page.getByRole('button', { name: 'The address' }).waitFor({ state: 'detached' });
    expect(await w.textbox.evaluate(FOCUSED), 'focus in the message box').to.equal(true);
    await shoot(page, 'quick-reply-sent');
    await page.keyboard.press('Escape');
    await w.dialog.waitFor({ state: 'hidden' });
  });

  it('has no serious accessibility violations in the open dialog (axe-core), and fits a 375 px screen', async () => {
    const site = await host();
    const { page } = browser();
    await page.setViewportSize({ width: 375, height: 700 });
    await page.goto(site.url);
    const userId = await openAndSend(page, 'Is the Nordic 2 tent waterproof?');
    await agentSays(userId, 'Yes: 3,000 mm hydrostatic head, taped seams.');
    await widget(page).log.getByText('taped seams').waitFor();
    // Full screen on a small screen.
    const box = await widget(page).dialog.boundingBox();
    expect(box).to.deep.include({ x: 0, y: 0, width: 375, height: 700 });
    await page.screenshot({ path: path.join(IMAGES, 'widget-mobile.png') });

    await expectWidgetAccessible(page);
  });

  it('shows a prompt in an empty conversation without a welcome message, until there is a message', async () => {
    const site = await host();
    const { page } = browser();
    await page.goto(site.url);
    await widget(page).launcher.click();
    const prompt = widget(page).log.getByText(EMPTY_PROMPT);
    await prompt.waitFor();
    await openAndSend(page, 'Hello there');
    expect(await prompt.count(), 'the prompt is gone').to.equal(0);
  });

  /** A state worth a look, at the page's size and on a phone (390 × 844), into SHOTS. */
  async function shoot(page: Page, name: string): Promise<void> {
    mkdirSync(SHOTS, { recursive: true });
    const size = page.viewportSize();
    await page.screenshot({ path: path.join(SHOTS, `${name}-desktop.png`) });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(SHOTS, `${name}-phone.png`) });
    if (size) await page.setViewportSize(size);
  }

  async function erase(userId: string): Promise<void> {
    const erased = await client(sharedServer().url).delete(`/adminApi/accounts/${t.account.id}/users/${userId}`, {
      token: await adminToken(),
    });
    expect(erased.status, erased.text).to.equal(200);
  }

  /** The identity the widget keeps in localStorage (identity.ts). */
  const storedIdentity = (page: Page) =>
    page.evaluate<{ deviceId: string; registered: boolean }>(`JSON.parse(localStorage.getItem('palaver:${t.account.identification}'))`);

  it('starts over as a new visitor after an operator erased the user: the next message is delivered', async () => {
    const site = await host();
    const { page, context } = browser();
    await page.goto(site.url);
    const erasedUser = await openAndSend(page, 'Please forget me');
    const before = await storedIdentity(page);
    // The socket goes (a network drop here; Palaver is to drop an erased user's sockets itself):
    // its reconnection is refused with device_not_found, as every REST call is.
    await context.setOffline(true);
    await page
      .getByRole('status')
      .filter({ hasText: /offline|Reconnecting/ })
      .waitFor();
    await erase(erasedUser);

    const w = widget(page);
    await w.textbox.fill('Hello again');
    await w.textbox.press('Enter');
    await context.setOffline(false);
    const delivered = await waitForPayload((p) => p.type === 'message' && p.message === 'Hello again');
    expect(delivered.user.id, 'a new user').to.not.equal(erasedUser);
    await page.locator('li.msg.pending').waitFor({ state: 'detached' });
    await w.log.getByText('Hello again').waitFor();
    expect(await w.log.getByText('Please forget me').count(), 'the erased conversation is gone').to.equal(0);
    expect((await storedIdentity(page)).deviceId, 'a new device').to.not.equal(before.deviceId);
    await shoot(page, 'erased-next-message');

    await page.reload();
    await w.launcher.click();
    await w.log.getByText('Hello again').waitFor();
  });

  it('shows an empty conversation that works after a reload once an operator erased the user', async () => {
    const site = await host();
    const { page } = browser();
    await page.goto(site.url);
    const erasedUser = await openAndSend(page, 'Delete my data');
    const before = await storedIdentity(page);
    await erase(erasedUser);

    await page.reload();
    const w = widget(page);
    await w.launcher.click();
    await w.log.getByText(EMPTY_PROMPT).waitFor();
    expect(await w.log.getByText('Delete my data').count()).to.equal(0);
    const after = await storedIdentity(page);
    expect(after.deviceId, 'a new device').to.not.equal(before.deviceId);
    expect(after.registered, 'registered when the chat opened').to.equal(true);
    await shoot(page, 'erased-reload');
    await w.textbox.fill('Starting fresh');
    await w.textbox.press('Enter');
    const delivered = await waitForPayload((p) => p.type === 'message' && p.message === 'Starting fresh');
    expect(delivered.user.id, 'a new user').to.not.equal(erasedUser);
  });

  /** Every call the page makes to Palaver (REST and Socket.IO), counted as the browser sends it. */
  function palaverCalls(page: Page): () => number {
    const server = new URL(sharedServer().url).origin;
    let count = 0;
    page.on('request', (request: Request) => {
      const url = new URL(request.url());
      if (url.origin === server && /^\/(clientApi|socket\.io)\//.test(url.pathname)) count++;
    });
    return () => count;
  }

  /**
   * The unavailable state: the message, the composer disabled, one console line for the site
   * owner naming the code and the account, and no call to Palaver after it, whatever used to try
   * again: the backoff timer (the page's clock is run a minute ahead), the browser's `online`
   * event, opening the chat again.
   */
  async function expectUnavailable(page: Page, calls: () => number, code: string, account: string): Promise<void> {
    const w = widget(page);
    await w.dialog.getByRole('alert').filter({ hasText: UNAVAILABLE }).waitFor();
    const settled = calls();
    expect(settled, 'it did call Palaver').to.be.greaterThan(0);
    expect(await w.textbox.isDisabled(), 'text box disabled').to.equal(true);
    expect(await w.send.isDisabled(), 'Send disabled').to.equal(true);
    expect(await page.getByRole('button', { name: 'Attach file' }).isDisabled(), 'Attach disabled').to.equal(true);
    expect(await w.log.getByText(EMPTY_PROMPT).count(), 'no prompt to write').to.equal(0);

    await page.clock.runFor(60_000);
    await page.evaluate(`window.dispatchEvent(new Event('online'))`);
    await w.close.click();
    await w.launcher.click();
    await w.dialog.getByRole('alert').filter({ hasText: UNAVAILABLE }).waitFor();
    // A round trip of the page's own after all that: a call the widget made before it was sent first.
    await Promise.all([
      page.waitForResponse(`${new URL(page.url()).origin}/site.css`),
      page.evaluate(`fetch('/site.css').then(() => true)`),
    ]);
    expect(calls(), 'calls to Palaver after the unavailable state showed').to.equal(settled);

    const owner = browser().console.filter((line) => line.includes(account));
    expect(owner, browser().console.join('\n')).to.have.length(1);
    expect(owner[0]).to.match(/^error: Palaver chat widget: /);
    expect(owner[0]).to.include(code).and.include('data-account');
  }

  it('says the chat is unavailable and stops calling Palaver when the snippet names no account', async () => {
    const site = await host({ account: 'NOT-A-REAL-ACCOUNT' });
    const { page } = browser();
    const calls = palaverCalls(page);
    await page.clock.install();
    // The registration is held until the visitor has written: what was on its way shows as not sent.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/clientApi/v1.9/devices', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(site.url);
    const w = widget(page);
    await w.launcher.click();
    await w.textbox.fill('Is anyone there?');
    await w.textbox.press('Enter');
    await w.log.getByText('Sending…').waitFor();
    release();

    await expectUnavailable(page, calls, 'account_not_found', 'NOT-A-REAL-ACCOUNT');
    const pending = page.locator('li.msg.pending', { hasText: 'Is anyone there?' });
    expect(await pending.locator('.meta').innerText()).to.equal('Not sent.');
    expect(await pending.getByRole('button', { name: 'Retry' }).count(), 'no Retry that could only fail').to.equal(0);
  });

  it('says the chat is unavailable on a page of an origin the account does not allow', async () => {
    const allowed = await client(sharedServer().url).patch(`/adminApi/accounts/${t.account.id}`, {
      token: await adminToken(),
      json: { allowedOrigins: ['https://only.example'] },
    });
    expect(allowed.status, allowed.text).to.equal(200);
    const site = await host();
    const { page } = browser();
    const calls = palaverCalls(page);
    await page.clock.install();
    await page.goto(site.url);
    await widget(page).launcher.click();
    await expectUnavailable(page, calls, 'origin_not_allowed', t.account.identification);
    expect(browser().console.join('\n')).to.include(site.origin).and.include('Allowed widget origins');
  });
});
