// The widget's per-account settings (docs/widget.md): the pre-chat form, business hours and the
// usual reply time through the Admin API (validated), the widget's GET /chat-settings, the
// Service API's GET /account/hours at fixed moments (`at`), and the redemption of an email's
// `#palaver-conversation=` token (docs/security.md).
import { expect } from 'chai';
import { addressDigest, signLink } from '../src/email/links.ts';
import { accountWithDesk, adminToken, type AccountData } from './support/factories.ts';
import { client, type Client } from './support/http.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { Widget, newDeviceId, authFor } from './support/widget.ts';

const LINK_SECRET = 'a test secret that is long enough to sign links';

const AMSTERDAM = {
  timeZone: 'Europe/Amsterdam',
  weekly: {
    monday: [
      { from: '09:00', to: '12:30' },
      { from: '13:30', to: '17:00' },
    ],
    tuesday: [{ from: '09:00', to: '17:00' }],
    wednesday: [{ from: '09:00', to: '17:00' }],
    thursday: [{ from: '09:00', to: '17:00' }],
    friday: [{ from: '09:00', to: '16:00' }],
  },
  closedDays: ['2026-12-25', '2026-12-24'],
};

describe('chat settings: pre-chat form, business hours, conversation links', function () {
  this.timeout(60_000);
  let server: TestServer;
  let api: Client;
  let token: string;
  let account: AccountData;

  before(async () => {
    server = await startTestServer({ email: { linkSecret: LINK_SECRET } });
    api = client(server.url);
    token = await adminToken(server.url);
  });
  after(async () => {
    await server?.stop();
  });
  beforeEach(async () => {
    account = (await accountWithDesk(server.url, 'Fietsenwinkel')).account;
  });

  const patch = (json: unknown) => api.patch<Record<string, unknown>>(`/adminApi/accounts/${account.id}`, { token, json });
  const widget = (deviceId = newDeviceId()) => new Widget(account, deviceId, undefined, '', server.url);

  it('keeps the form, the hours and the reply time, and shows them to operators and the widget', async () => {
    const fresh = await api.get<Record<string, unknown>>(`/adminApi/accounts/${account.id}`, { token });
    expect(fresh.body.data).to.include({ businessHours: null, replyTimeMinutes: null });
    expect(fresh.body.data.prechatForm).to.deep.equal({ fields: 'none', timing: 'after' });

    const changed = await patch({
      prechatForm: { fields: 'name_email', timing: 'before' },
      businessHours: { ...AMSTERDAM, timeZone: 'europe/amsterdam' },
      replyTimeMinutes: 15,
    });
    expect(changed.status, changed.text).to.equal(200);
    expect(changed.body.data.prechatForm).to.deep.equal({ fields: 'name_email', timing: 'before' });
    // The zone's own spelling; closed days in order, once each.
    expect(changed.body.data.businessHours).to.deep.equal({ ...AMSTERDAM, closedDays: ['2026-12-24', '2026-12-25'] });
    expect(changed.body.data.replyTimeMinutes).to.equal(15);

    const settings = await widget().call<Record<string, unknown>>('GET', '/chat-settings');
    expect(settings.status, settings.text).to.equal(200);
    expect(settings.body.data.prechatForm).to.deep.equal({ fields: 'name_email', timing: 'before' });
    expect(settings.body.data.replyTimeMinutes).to.equal(15);
    expect(settings.body.data.hours).to.have.keys('open', 'closesAt', 'nextOpenAt', 'timeZone');
    // A browser on another origin may read it (the Client API's CORS).
    const cors = await widget().call('GET', '/chat-settings', { headers: { origin: 'https://shop.example' } });
    expect(cors.headers.get('access-control-allow-origin')).to.equal('https://shop.example');

    // null clears the hours and the reply time; the form goes back to none.
    const cleared = await patch({ businessHours: null, replyTimeMinutes: null, prechatForm: { fields: 'none' } });
    expect(cleared.body.data).to.include({ businessHours: null, replyTimeMinutes: null });
    const after = await widget().call<Record<string, unknown>>('GET', '/chat-settings');
    expect(after.body.data).to.deep.equal({ prechatForm: { fields: 'none', timing: 'after' }, replyTimeMinutes: null, hours: null });
  });

  it('refuses a schedule that cannot be, naming every field (422), and changes nothing', async () => {
    const refused = await patch({
      prechatForm: { fields: 'phone', timing: 'later' },
      businessHours: {
        timeZone: 'Europe/Atlantis',
        weekly: {
          monday: [
            { from: '09:00', to: '13:00' },
            { from: '12:00', to: '17:00' },
          ],
          tuesday: [{ from: '17:00', to: '09:00' }],
          wednesday: [{ from: '9:00', to: '25:00' }],
          someday: [],
        },
        closedDays: ['2026-02-30', 'tomorrow'],
      },
      replyTimeMinutes: 0,
    });
    expect(refused.status, refused.text).to.equal(422);
    expect(refused.body.notifications[0]?.message).to.equal('validation_failed');
    const fields = refused.body.notifications.map((n) => (n as { field?: string }).field);
    expect(fields).to.include.members([
      'body.prechatForm.fields',
      'body.prechatForm.timing',
      'body.businessHours.timeZone',
      'body.businessHours.weekly.monday.1.from',
      'body.businessHours.weekly.tuesday.0.to',
      'body.businessHours.weekly.wednesday.0.from',
      'body.businessHours.weekly.wednesday.0.to',
      'body.businessHours.closedDays.0',
      'body.businessHours.closedDays.1',
      'body.replyTimeMinutes',
    ]);
    const overlap = refused.body.notifications.find((n) => (n as { field?: string }).field === 'body.businessHours.weekly.monday.1.from');
    expect((overlap as { detail?: string }).detail).to.contain('not overlapping');
    const unchanged = await api.get<Record<string, unknown>>(`/adminApi/accounts/${account.id}`, { token });
    expect(unchanged.body.data).to.include({ businessHours: null, replyTimeMinutes: null });
  });

  describe('GET /account/hours (Service API)', () => {
    let hours: (at?: string) => ReturnType<Client['get']>;

    beforeEach(async () => {
      const made = await api.post<{ apiKey: string }>(`/adminApi/accounts/${account.id}/services`, {
        token,
        json: { name: 'Bot', webhookUrl: null },
      });
      expect(made.status, made.text).to.equal(201);
      const key = made.body.data.apiKey;
      hours = (at) => api.get(`/serviceApi/v2.3/account/hours${at ? `?at=${encodeURIComponent(at)}` : ''}`, { token: key });
    });

    it('answers always open while the account has no hours', async () => {
      const answer = await hours('2026-11-28T12:00:00Z');
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.data).to.deep.equal({
        schedule: null,
        replyTimeMinutes: null,
        at: '2026-11-28T12:00:00.000Z',
        open: true,
        closesAt: null,
        nextOpenAt: null,
      });
    });

    it('tells whether the team is in at a moment, when it closes and when it opens next, in the account’s zone', async () => {
      expect((await patch({ businessHours: AMSTERDAM, replyTimeMinutes: 20 })).status).to.equal(200);
      const at = async (moment: string) => {
        const answer = await hours(moment);
        expect(answer.status, answer.text).to.equal(200);
        const data = answer.body.data as Record<string, unknown>;
        return { open: data.open, closesAt: data.closesAt, nextOpenAt: data.nextOpenAt };
      };
      // Monday 30 November 2026, 10:00 in Amsterdam (UTC+1): open until the lunch break.
      expect(await at('2026-11-30T09:00:00Z')).to.deep.equal({ open: true, closesAt: '2026-11-30T11:30:00.000Z', nextOpenAt: null });
      // The lunch break: back at 13:30 the same day.
      expect(await at('2026-11-30T12:00:00Z')).to.deep.equal({ open: false, closesAt: null, nextOpenAt: '2026-11-30T12:30:00.000Z' });
      // The end of an interval is closed.
      expect(await at('2026-11-30T17:00:00+01:00')).to.deep.equal({ open: false, closesAt: null, nextOpenAt: '2026-12-01T08:00:00.000Z' });
      // Friday evening: back on Monday.
      expect(await at('2026-12-04T18:00:00+01:00')).to.deep.equal({ open: false, closesAt: null, nextOpenAt: '2026-12-07T08:00:00.000Z' });
      // Thursday 24 and Friday 25 December are closed days: back on Monday the 28th.
      expect(await at('2026-12-23T17:30:00+01:00')).to.deep.equal({ open: false, closesAt: null, nextOpenAt: '2026-12-28T08:00:00.000Z' });
      // Summer time (UTC+2): 09:00 in Amsterdam is 07:00 UTC.
      expect(await at('2027-06-06T12:00:00Z')).to.deep.equal({ open: false, closesAt: null, nextOpenAt: '2027-06-07T07:00:00.000Z' });
      // Over the change to summer time (Sunday 28 March 2027): Monday opens at 07:00 UTC.
      expect(await at('2027-03-26T18:00:00+01:00')).to.deep.equal({ open: false, closesAt: null, nextOpenAt: '2027-03-29T07:00:00.000Z' });
      const full = await hours('2026-11-30T09:00:00Z');
      expect(full.body.data).to.deep.include({ replyTimeMinutes: 20, at: '2026-11-30T09:00:00.000Z' });
      expect((full.body.data as { schedule: unknown }).schedule).to.deep.equal({ ...AMSTERDAM, closedDays: ['2026-12-24', '2026-12-25'] });
    });

    it('answers never open next for a schedule without intervals, and refuses a moment that is not one', async () => {
      expect((await patch({ businessHours: { timeZone: 'UTC', weekly: {} } })).status).to.equal(200);
      const answer = await hours('2026-11-30T09:00:00Z');
      expect(answer.body.data).to.deep.include({ open: false, closesAt: null, nextOpenAt: null });
      const bad = await hours('monday morning');
      expect(bad.status).to.equal(422);
      expect(bad.body.notifications[0]).to.deep.include({ message: 'validation_failed', field: 'query.at' });
    });
  });

  describe('POST /conversation-link (Client API)', () => {
    const HOUR = 3600;
    const linkFor = (userId: number, email: string, exp = Math.floor(Date.now() / 1000) + HOUR, accountId = account.id) =>
      signLink(LINK_SECRET, { k: 'conversation', a: accountId, u: userId, e: addressDigest(email), exp });

    async function customerWithEmail(email = 'ada@example.com') {
      const first = widget();
      const userId = (await first.register()).body.data.userId;
      expect((await first.send('Is my bike ready?')).status).to.equal(200);
      expect((await first.call('PUT', '/users/me/contact', { json: { email } })).status).to.equal(200);
      return { first, userId };
    }

    it('opens the conversation on its own device, and gives another browser a new device of that anonymous user', async () => {
      const { first, userId } = await customerWithEmail();
      const link = linkFor(userId, 'ada@example.com');
      const same = await first.call<{ outcome: string }>('POST', '/conversation-link', { json: { token: link, deviceId: newDeviceId() } });
      expect(same.status, same.text).to.equal(200);
      expect(same.body.data).to.deep.equal({ outcome: 'current', deviceId: first.deviceId });

      // Another browser (the email opened on a phone): a new device, its conversation the customer's.
      const phone = widget();
      const fresh = newDeviceId();
      const redeemed = await phone.call<{ outcome: string; deviceId: string }>('POST', '/conversation-link', {
        json: { token: link, deviceId: fresh },
      });
      expect(redeemed.status, redeemed.text).to.equal(200);
      expect(redeemed.body.data).to.deep.equal({ outcome: 'device', deviceId: fresh });
      const reopened = widget(fresh);
      const page = await reopened.messages();
      expect(page.status, page.text).to.equal(200);
      expect(page.body.data.map((m) => m.message)).to.deep.equal(['Is my bike ready?']);
      // The same id twice is refused: a device is made once.
      const again = await widget().call('POST', '/conversation-link', { json: { token: link, deviceId: fresh } });
      expect(again.status).to.equal(409);
      // A widget that asks for no new device (a signed-in one) is told the conversation is elsewhere.
      const elsewhere = await widget().call<{ outcome: string }>('POST', '/conversation-link', { json: { token: link } });
      expect(elsewhere.body.data.outcome).to.equal('elsewhere');
    });

    it('never opens a registered customer’s conversation by a link', async () => {
      const signedIn = widget();
      signedIn.authorization = authFor(account, 'customer-7');
      const userId = (await signedIn.register()).body.data.userId;
      expect((await signedIn.call('PUT', '/users/me/contact', { json: { email: 'bo@example.com' } })).status).to.equal(200);
      const answer = await widget().call<{ outcome: string }>('POST', '/conversation-link', {
        json: { token: linkFor(userId, 'bo@example.com'), deviceId: newDeviceId() },
      });
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.data.outcome).to.equal('sign_in');
    });

    it('refuses a forged, expired, other account’s or outdated link (404 link_not_found), making no device', async () => {
      const { first, userId } = await customerWithEmail('cy@example.com');
      const good = linkFor(userId, 'cy@example.com');
      const other = await api.post<AccountData>('/adminApi/accounts', { token, json: { name: 'Elsewhere' } });
      const tokens = [
        `${good}x`,
        linkFor(userId, 'cy@example.com', Math.floor(Date.now() / 1000) - 10),
        linkFor(userId, 'someone@example.com'),
        linkFor(userId, 'cy@example.com', undefined, other.body.data.id),
        signLink('another secret', { k: 'conversation', a: account.id, u: userId, e: addressDigest('cy@example.com'), exp: 2e9 }),
        signLink(LINK_SECRET, { k: 'unsubscribe', a: account.id, u: userId }),
      ];
      for (const t of tokens) {
        const deviceId = newDeviceId();
        const answer = await widget().call('POST', '/conversation-link', { json: { token: t, deviceId } });
        expect(answer.status, t).to.equal(404);
        expect(answer.body.notifications[0]?.message).to.equal('link_not_found');
        expect((await widget(deviceId).messages()).body.notifications[0]?.message, 'no device made').to.equal('device_not_found');
      }
      // The customer changed their address: the links of the emails to the old one stop working.
      expect((await widget().call('POST', '/conversation-link', { json: { token: good } })).status).to.equal(200);
      expect((await first.call('PUT', '/users/me/contact', { json: { email: 'cy@elsewhere.example' } })).status).to.equal(200);
      expect((await widget().call('POST', '/conversation-link', { json: { token: good } })).status).to.equal(404);
      const bad = await widget().call('POST', '/conversation-link', { json: { token: good, deviceId: 'short' } });
      expect(bad.status).to.equal(422);
    });
  });
});
