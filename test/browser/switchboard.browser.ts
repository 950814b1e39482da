// The inbox page shows a conversation's Services: the active one, the one offered it (until
// when) and those listening on standby, and follows a handover once the conversation is read again.
import { expect } from 'chai';
import { useBrowser } from '../support/browser.ts';
import { DASHBOARD_SHOTS, expectAccessible, openDashboard, signIn } from '../support/dashboard.ts';
import { adminToken, createAccount, createService } from '../support/factories.ts';
import { client } from '../support/http.ts';
import { sharedServer } from '../support/server.ts';
import { Widget } from '../support/widget.ts';

const api = () => client(sharedServer().url);

describe('Inbox: the Services on a conversation', function () {
  this.timeout(120_000);
  const browser = useBrowser();

  it('shows the active, the offered and the standby Services, and the owner after the accept', async () => {
    const { page } = browser();
    const token = await adminToken();
    const account = await createAccount();
    const bot = await createService(account.id, { name: 'Helpbot' });
    const desk = await createService(account.id, { name: 'Agent desk' });
    const crm = await createService(account.id, { name: 'CRM' });
    expect((await api().patch(`/adminApi/services/${crm.id}`, { token, json: { standby: 'all' } })).status).to.equal(200);
    const widget = new Widget({ ...account, defaultServiceId: bot.id });
    const userId = (await widget.register()).body.data.userId;
    expect((await widget.send('Where is my parcel?')).status).to.equal(200);
    const offered = await api().post(`/serviceApi/v2.3/users/${userId}/handover/offer`, {
      token: bot.apiKey,
      json: { serviceIdentification: desk.identification, reason: 'parcel question' },
    });
    expect(offered.status, offered.text).to.equal(200);

    await openDashboard(page, `#/accounts/${account.id}/inbox`);
    await signIn(page);
    await page.getByRole('button', { name: 'Bots', exact: true }).click();
    await page
      .getByRole('list', { name: 'Inbox conversations' })
      .getByRole('link', { name: /Anonymous user/ })
      .click();
    const line = page.getByLabel('Services on this conversation');
    await line.getByText('Active: Helpbot (default)').waitFor();
    await line.getByText(/Offered to Agent desk until/).waitFor();
    await line.getByText('Standby: CRM').waitFor();
    await expectAccessible(page, 'inbox, Services on a conversation');
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: `${DASHBOARD_SHOTS}/inbox-switchboard-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 900 });

    const accepted = await api().post(`/serviceApi/v2.3/users/${userId}/handover/accept`, { token: desk.apiKey, json: {} });
    expect(accepted.status, accepted.text).to.equal(200);
    // The owner change reaches the page live (the /operators channel), which reads the conversation again.
    await line.getByText('Active: Agent desk').waitFor();
    expect(await line.textContent()).to.equal('Active: Agent desk · Standby: CRM');
  });
});
