// Reaching a visitor who leaves, in a real Chromium (docs/widget.md): the pre-chat form before
// the first message (required, validated) and after it (skippable), the after-hours notice and
// the reply time in the header (English and Dutch), and the way back from an email's link
// (`#palaver-conversation=`) in another browser. Each state is checked with axe-core and
// photographed at 1280 and 390 px (docs/images/widget-prechat*.png, widget-after-hours*.png).
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { addressDigest, signLink } from '../../src/email/links.ts';
import { useBrowser } from '../support/browser.ts';
import { accountWithDesk, adminToken, type AccountData } from '../support/factories.ts';
import { client, type Client } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { expectWidgetAccessible, startWidgetHost, type WidgetHost, type WidgetHostOptions } from '../support/widget-host.ts';

const IMAGES = path.resolve(import.meta.dirname, '..', '..', 'docs', 'images');
const LINK_SECRET = 'a test secret that is long enough to sign links';
const TITLE = 'Chat with Acme';
// In-page (this suite is typed without the DOM library): focus inside the Shadow DOM is the shadow root's activeElement.
type InPage = { getRootNode(): unknown };
const FOCUSED = (el: InPage) => (el.getRootNode() as { activeElement: unknown }).activeElement === el;

describe('chat widget: pre-chat form, business hours, email links (Chromium)', function () {
  this.timeout(120_000);
  const browser = useBrowser();
  let server: TestServer;
  let api: Client;
  let token: string;
  let account: AccountData;
  let serviceKey: string;
  const hosts: WidgetHost[] = [];

  before(async () => {
    server = await startTestServer({ email: { linkSecret: LINK_SECRET } });
    api = client(server.url);
    token = await adminToken(server.url);
  });
  after(async () => {
    await server?.stop();
  });
  beforeEach(async () => {
    const made = await accountWithDesk(server.url, 'Acme Outdoor');
    account = made.account;
    serviceKey = made.service.apiKey;
  });
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.close();
  });

  async function host(options: Partial<WidgetHostOptions> = {}): Promise<WidgetHost> {
    const started = await startWidgetHost(server.url, { account: account.identification, data: { title: TITLE }, ...options });
    hosts.push(started);
    return started;
  }

  async function settings(json: Record<string, unknown>): Promise<void> {
    const answer = await api.patch(`/adminApi/accounts/${account.id}`, { token, json });
    expect(answer.status, answer.text).to.equal(200);
  }

  /** The account's newest user (the one the browser made) and its contact, as a Service reads them. */
  async function newestUser(): Promise<{ id: number; contact: Record<string, unknown> | null }> {
    const users = await api.get<Array<{ id: number }>>(`/adminApi/accounts/${account.id}/users`, { token });
    const id = users.body.data[0]?.id;
    if (!id) throw new Error('no user yet');
    const user = await api.get<{ contact: Record<string, unknown> | null }>(`/serviceApi/v2.3/users/${id}`, { token: serviceKey });
    return { id, contact: user.body.data.contact };
  }

  const shadow = (page: Page) => ({
    launcher: page.getByRole('button', { name: 'Open chat' }),
    dialog: page.getByRole('dialog', { name: TITLE }),
    textbox: page.getByRole('textbox', { name: 'Message' }),
    log: page.getByRole('log'),
  });

  /** The widget opened on a new site in the test's browser, at 1280 × 800. */
  async function openWidget(): Promise<{ page: Page; w: ReturnType<typeof shadow> }> {
    const site = await host();
    const { page } = browser();
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(site.url);
    const w = shadow(page);
    await w.launcher.click();
    return { page, w };
  }

  /** Screenshots at 1280 × 800 and 390 × 844, each checked with axe. */
  async function shoot(page: Page, name: string): Promise<void> {
    await page.setViewportSize({ width: 1280, height: 800 });
    await expectWidgetAccessible(page);
    await page.screenshot({ path: path.join(IMAGES, `${name}.png`) });
    await page.setViewportSize({ width: 390, height: 844 });
    await expectWidgetAccessible(page);
    await page.screenshot({ path: path.join(IMAGES, `${name}-phone.png`) });
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  it('asks name and email before the first message, checks them, saves them as the contact, then lets the visitor write', async () => {
    await settings({ prechatForm: { fields: 'name_email', timing: 'before' }, replyTimeMinutes: 10 });
    const { page, w } = await openWidget();
    const form = page.getByRole('form', { name: 'Before we start' });
    await form.waitFor();
    await page.getByText('Usually replies within 10 minutes').waitFor();
    // The form stands in for the composer, and has focus.
    expect(await w.textbox.isVisible()).to.equal(false);
    expect(await page.getByRole('textbox', { name: 'Your name' }).evaluate(FOCUSED)).to.equal(true);
    await page
      .getByRole('button', { name: 'Not now' })
      .count()
      .then((n) => expect(n, 'no skip before the first message').to.equal(0));
    await shoot(page, 'widget-prechat');

    // Nothing filled in, then an address that is none: each field says what is wrong.
    await page.getByRole('button', { name: 'Start chatting' }).click();
    await page.getByText('Please enter your name.').waitFor();
    await page.getByText('Please enter an email address such as name@example.com.').waitFor();
    await page.getByRole('textbox', { name: 'Your name' }).fill('Ada Lovelace');
    await page.getByRole('textbox', { name: 'Your email' }).fill('ada@example');
    await page.getByRole('button', { name: 'Start chatting' }).click();
    expect(await page.getByRole('textbox', { name: 'Your email' }).getAttribute('aria-invalid')).to.equal('true');
    await page.getByRole('textbox', { name: 'Your email' }).fill('ada@example.com');
    await page.getByRole('button', { name: 'Start chatting' }).click();

    await w.textbox.waitFor();
    await page.getByText('Thanks! If you have left, we will answer at ada@example.com.').waitFor();
    const user = await newestUser();
    expect(user.contact).to.deep.include({ email: 'ada@example.com', name: 'Ada Lovelace', language: 'en', source: 'client' });
    await w.textbox.fill('Do you have the Nordic 2 in green?');
    await w.textbox.press('Enter');
    await w.log.getByText('Do you have the Nordic 2 in green?').waitFor();
    // A reload knows the address: no form again.
    await page.reload();
    await w.launcher.click();
    await w.log.getByText('Do you have the Nordic 2 in green?').waitFor();
    expect(await page.getByRole('form').count()).to.equal(0);
  });

  it('asks for the email after the first message, and the visitor may skip it', async () => {
    await settings({ prechatForm: { fields: 'email', timing: 'after' } });
    const { page, w } = await openWidget();
    // Nothing asked before writing.
    expect(await page.getByRole('form', { name: 'Get our answer by email' }).count()).to.equal(0);
    await w.textbox.fill('Is the shop open on Sunday?');
    await w.textbox.press('Enter');
    const form = page.getByRole('form', { name: 'Get our answer by email' });
    await form.waitFor();
    await page.getByText('Leave your email and we will answer there if you have left.').waitFor();
    expect(await page.getByRole('textbox', { name: 'Your name' }).count(), 'email only').to.equal(0);
    await shoot(page, 'widget-prechat-after');
    await page.getByRole('button', { name: 'Not now' }).click();
    await form.waitFor({ state: 'detached' });
    // Focus goes back to writing.
    expect(await w.textbox.evaluate(FOCUSED)).to.equal(true);
    expect((await newestUser()).contact).to.equal(null);
  });

  it('says when the team is back outside business hours, in English and Dutch, and offers the form', async () => {
    const { page } = browser();
    // The team works one weekday, three days from now in the visitor's zone, from 09:00.
    const site = await host();
    await page.goto(site.url);
    const zone = await page.evaluate<string>('Intl.DateTimeFormat().resolvedOptions().timeZone');
    const day = await page.evaluate<number>('(new Date().getDay() + 3) % 7');
    const weekday = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'][day] as string;
    const name = (locale: string) =>
      page.evaluate<string>(`new Intl.DateTimeFormat('${locale}', { weekday: 'long' }).format(new Date(Date.now() + 3 * 86400000))`);
    await settings({ businessHours: { timeZone: zone, weekly: { [weekday]: [{ from: '09:00', to: '17:00' }] } }, replyTimeMinutes: 120 });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.reload();
    const w = shadow(page);
    await w.launcher.click();
    const notice = page.locator('[data-palaver-widget] .hours-notice');
    await notice.waitFor();
    const said = await notice.innerText();
    expect(said, said)
      .to.contain(`We're back ${await name('en')} at 09:00.`)
      .and.to.contain('Leave your email and a message, and we will answer there.');
    // The header says the team is away, not how fast it usually answers.
    expect(await page.locator('[data-palaver-widget] .reply-time').innerText()).to.equal('We are away right now.');
    // The empty conversation's prompt agrees with the notice: no promise of an answer right here.
    await page.getByText("Send us a message and we'll answer when we're back.").waitFor();
    expect(await page.getByText("we'll get back to you here").count()).to.equal(0);
    await page.getByRole('form', { name: 'Get our answer by email' }).waitFor();
    await shoot(page, 'widget-after-hours');
    await page.getByRole('textbox', { name: 'Your email' }).fill('bo@example.com');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Leave a message: we will answer by email at bo@example.com.').waitFor();

    const dutch = await host({ data: { title: TITLE, locale: 'nl' } });
    const other = await page.context().browser()?.newContext();
    if (!other) throw new Error('no browser');
    const nl = await other.newPage();
    await nl.setViewportSize({ width: 390, height: 844 });
    await nl.goto(dutch.url);
    await nl.getByRole('button', { name: 'Chat openen' }).click();
    await nl.getByText(`We zijn er ${await name('nl')} weer om 09:00.`).waitFor();
    await nl.getByText('Laat je e-mailadres en een bericht achter, dan antwoorden we daar.').waitFor();
    await nl.getByText('Stuur ons een bericht, dan antwoorden we als we er weer zijn.').waitFor();
    await nl.getByRole('form', { name: 'Ons antwoord per e-mail' }).waitFor();
    await expectWidgetAccessible(nl);
    await other.close();
  });

  it('opens the conversation from an email link in another browser, and takes the token out of the address', async () => {
    await settings({ prechatForm: { fields: 'email', timing: 'after' } });
    const site = await host();
    const { page } = browser();
    await page.goto(site.url);
    const w = shadow(page);
    await w.launcher.click();
    await w.textbox.fill('Can I return a tent after a week?');
    await w.textbox.press('Enter');
    await page.getByRole('textbox', { name: 'Your email' }).fill('cy@example.com');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Thanks! If you have left, we will answer at cy@example.com.').waitFor();
    const { id } = await newestUser();
    const answer = await api.post(`/serviceApi/v2.3/users/${id}/messages`, {
      token: serviceKey,
      json: { message: 'Yes, within 30 days.', agent: { id: 1, name: 'Ada' } },
    });
    expect(answer.status, answer.text).to.equal(201);
    const link = signLink(LINK_SECRET, {
      k: 'conversation',
      a: account.id,
      u: id,
      e: addressDigest('cy@example.com'),
      exp: Math.floor(Date.now() / 1000) + 3600,
    });

    // The email opened on a phone: another browser, no identity of its own yet.
    const phone = await page.context().browser()?.newContext();
    if (!phone) throw new Error('no browser');
    const mobile = await phone.newPage();
    await mobile.setViewportSize({ width: 390, height: 844 });
    await mobile.goto(`${site.url}#palaver-conversation=${link}`);
    await mobile.getByRole('dialog', { name: TITLE }).waitFor();
    await mobile.getByRole('log').getByText('Can I return a tent after a week?').waitFor();
    await mobile.getByRole('log').getByText('Yes, within 30 days.').waitFor();
    expect(await mobile.evaluate<string>('location.href')).to.equal(site.url);
    // It writes into the same conversation.
    await mobile.getByRole('textbox', { name: 'Message' }).fill('Great, thanks!');
    await mobile.getByRole('textbox', { name: 'Message' }).press('Enter');
    await w.log.getByText('Great, thanks!').waitFor();

    // An expired link opens the chat with a word on it, and no conversation.
    const late = signLink(LINK_SECRET, {
      k: 'conversation',
      a: account.id,
      u: id,
      e: addressDigest('cy@example.com'),
      exp: Math.floor(Date.now() / 1000) - 60,
    });
    const stranger = await phone.browser()?.newContext();
    if (!stranger) throw new Error('no browser');
    const p3 = await stranger.newPage();
    await p3.goto(`${site.url}#palaver-conversation=${late}`);
    await p3.getByText('This link has expired. Write to us here and we will pick it up.').waitFor();
    expect(await p3.getByRole('log').getByText('Can I return a tent').count()).to.equal(0);
    await expectWidgetAccessible(p3);
    await stranger.close();
    await phone.close();
  });
});
