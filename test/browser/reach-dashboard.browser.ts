// The dashboard's side of reaching customers who left (docs/dashboard.md): the account page's
// "Chat widget: form and hours" card (saved through the Admin API, Palaver's 422 shown by
// field) and the customer's contact details, with who set them, in the inbox's side panel.
import { expect } from 'chai';
import { useBrowser } from '../support/browser.ts';
import { DASHBOARD_SHOTS, openDashboard, screenshots, signIn } from '../support/dashboard.ts';
import { adminToken, createAccount, type AccountData } from '../support/factories.ts';
import { client } from '../support/http.ts';
import { sharedServer } from '../support/server.ts';
import { Widget } from '../support/widget.ts';
import { mkdirSync } from 'node:fs';

const api = () => client(sharedServer().url);

describe('Operator dashboard: pre-chat form, business hours, contact details', function () {
  this.timeout(90_000);
  const browser = useBrowser();
  let account: AccountData;

  before(() => mkdirSync(DASHBOARD_SHOTS, { recursive: true }));
  beforeEach(async () => {
    account = await createAccount();
    const shown = await api().get<{ inbox: { identification: string } }>(`/adminApi/accounts/${account.id}`, { token: await adminToken() });
    const inbox = await api().put(`/adminApi/accounts/${account.id}/default-service`, {
      token: await adminToken(),
      json: { serviceIdentification: shown.body.data.inbox.identification },
    });
    expect(inbox.status, inbox.text).to.equal(200);
  });

  it('sets the form, the reply time and the hours on the account page, listing what Palaver refuses by field', async () => {
    const { page } = browser();
    await page.setViewportSize({ width: 1280, height: 900 });
    await openDashboard(page, `#/accounts/${account.id}`);
    await signIn(page);
    await page.getByLabel('Pre-chat form').selectOption({ label: 'Name and email' });
    await page.getByLabel('Asked').selectOption({ label: 'Before the first message (required)' });
    await page.getByLabel('Usual reply time (minutes)').fill('15');
    await page.getByLabel('Set business hours').check();
    await page.getByLabel('Time zone').fill('Europe/Amsterdam');
    await page.getByLabel('Monday').fill('09:00-12:30, 12:00-17:00');
    await page.getByLabel('Friday').fill('9:00-16:00');
    await page.getByLabel('Closed days').fill('2026-12-25\n2026-12-26');
    await page.getByRole('button', { name: 'Save form and hours' }).click();
    await page.getByText('businessHours.weekly.monday.1.from: must not be before the end of the interval before it').waitFor();
    await page.getByText('Not saved: see the problems above.').waitFor();
    await page.getByLabel('Monday').fill('09:00-12:30, 13:30-17:00');
    await page.getByRole('button', { name: 'Save form and hours' }).click();
    await page.getByText('Form and hours saved.').waitFor();
    const saved = await api().get<Record<string, unknown>>(`/adminApi/accounts/${account.id}`, { token: await adminToken() });
    expect(saved.body.data).to.deep.include({
      prechatForm: { fields: 'name_email', timing: 'before' },
      replyTimeMinutes: 15,
      businessHours: {
        timeZone: 'Europe/Amsterdam',
        weekly: {
          monday: [
            { from: '09:00', to: '12:30' },
            { from: '13:30', to: '17:00' },
          ],
          friday: [{ from: '09:00', to: '16:00' }],
        },
        closedDays: ['2026-12-25', '2026-12-26'],
      },
    });
    await screenshots(page, 'account-chat-settings');
  });

  it('shows the customer’s email and name in the inbox side panel, and who set them', async () => {
    const widget = new Widget(account);
    expect((await widget.register()).status).to.equal(200);
    expect((await widget.send('Where is my order?')).status).to.equal(200);
    const contact = await widget.call('PUT', '/users/me/contact', { json: { email: 'ada@example.com', name: 'Ada Lovelace' } });
    expect(contact.status, contact.text).to.equal(200);
    const { page } = browser();
    await page.setViewportSize({ width: 1280, height: 900 });
    await openDashboard(page, `#/accounts/${account.id}/inbox`);
    await signIn(page);
    const entry = page.getByRole('list', { name: 'Inbox conversations' }).getByRole('link').first();
    await entry.waitFor();
    await entry.click();
    const side = page.getByRole('complementary', { name: 'Customer' });
    await side.getByRole('link', { name: 'ada@example.com' }).waitFor();
    await side.getByText('Ada Lovelace').waitFor();
    await side.getByText(/^by the customer \(chat widget\)/).waitFor();
    await screenshots(page, 'inbox-contact');
  });
});
