// The widget's "Email me this conversation" control in a real Chromium, against a Palaver that
// sends email to an SMTP stand-in on loopback: without a known address it says so; with one the
// transcript arrives with the visitor's message; the header with the control passes axe.
// Screenshots (1280 and 390 px wide) go to $WIDGET_SHOTS (default: the temporary directory's w-shots).
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { useBrowser } from '../support/browser.ts';
import { adminToken, type AccountData, type CreatedServiceData } from '../support/factories.ts';
import { client } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { SmtpStandIn } from '../support/smtp.ts';
import { expectWidgetAccessible, startWidgetHost, type WidgetHost } from '../support/widget-host.ts';

const SHOTS = process.env.WIDGET_SHOTS ?? path.join(os.tmpdir(), 'w-shots');

describe('chat widget: the transcript by email (Chromium)', function () {
  this.timeout(90_000);
  const browser = useBrowser();
  let smtp: SmtpStandIn;
  let server: TestServer;
  let site: WidgetHost | undefined;

  before(async () => {
    smtp = await SmtpStandIn.start();
    server = await startTestServer({
      publicUrl: 'https://chat.palaver.test',
      email: {
        linkSecret: 'a test secret that is long enough to sign links',
        smtp: { host: '127.0.0.1', port: smtp.port, from: 'Support <support@palaver.test>', timeoutMs: 5000 },
      },
      webhooks: { pollIntervalMs: 100 },
    });
  });
  after(async () => {
    await site?.close();
    await server?.stop();
    await smtp?.stop();
  });

  async function shoot(page: Page, name: string): Promise<void> {
    mkdirSync(SHOTS, { recursive: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: path.join(SHOTS, `${name}-desktop.png`) });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(SHOTS, `${name}-phone.png`) });
  }

  for (const [locale, strings] of [
    [
      'en',
      {
        button: 'Email me this conversation',
        noEmail: 'We do not know your email address yet.',
        sent: (email: string) => `The conversation is on its way to ${email}.`,
        subject: 'Your conversation with Acme',
      },
    ],
    [
      'nl',
      {
        button: 'Stuur mij dit gesprek per e-mail',
        noEmail: 'We kennen je e-mailadres nog niet.',
        sent: (email: string) => `Het gesprek is onderweg naar ${email}.`,
        subject: 'Je gesprek met Acme',
      },
    ],
  ] as const) {
    it(`emails the conversation from the header's control, and says why not without an address (${locale})`, async () => {
      const api = client(server.url);
      const token = await adminToken(server.url);
      const account = (await api.post<AccountData>('/adminApi/accounts', { token, json: { name: 'Acme' } })).body.data;
      const service = (await api.post<CreatedServiceData>(`/adminApi/accounts/${account.id}/services`, { token, json: { name: 'Desk' } }))
        .body.data;
      await site?.close();
      site = await startWidgetHost(server.url, { account: account.identification, data: { title: 'Chat with Acme', locale } });
      const { page } = browser();
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(site.url);
      await page.getByRole('button', { name: locale === 'nl' ? 'Chat openen' : 'Open chat' }).click();
      const textbox = page.getByRole('textbox', { name: locale === 'nl' ? 'Bericht' : 'Message' });
      await textbox.fill('Do you ship tents to Belgium?');
      await textbox.press('Enter');
      await page.locator('li.msg.pending').waitFor({ state: 'detached' });

      const users = await api.get<Array<{ id: number }>>(`/adminApi/accounts/${account.id}/users`, { token });
      const userId = users.body.data[0]?.id;
      const control = page.getByRole('button', { name: strings.button });
      await control.click();
      await page.getByRole('status').filter({ hasText: strings.noEmail }).waitFor();

      // The customer's backend knows the address (the pre-chat form is another way).
      const email = `visitor-${locale}@example.com`;
      const set = await api.put(`/users/${userId}/contact`, { token: service.apiKey, json: { email, language: locale } });
      expect(set.status, set.text).to.equal(200);
      await control.click();
      await page
        .getByRole('status')
        .filter({ hasText: strings.sent(email) })
        .waitFor();
      for (let i = 0; i < 200 && smtp.to(email).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      const [mail] = smtp.to(email);
      expect(mail?.parsed.subject).to.equal(strings.subject);
      expect(mail?.parsed.text).to.contain('Do you ship tents to Belgium?');

      await expectWidgetAccessible(page);
      await shoot(page, `widget-transcript-${locale}`);
    });
  }
});
