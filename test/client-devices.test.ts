// POST /devices through HTTP: every row of the spec's user state table, merging, the headers,
// and the concurrent cases, with the loopback receiver checking what the owner Service gets.
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { DeviceSchema, UserSchema } from '../src/db/entities/index.ts';
import { createAccount } from './support/factories.ts';
import { outboxRows, receivedExactly } from './support/outbox.ts';
import { sharedServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget, authFor, newDeviceId } from './support/widget.ts';

const em = () => sharedServer().deps.db.orm.em.fork();

describe('Client API: devices and users', function () {
  this.timeout(30_000);
  let t: Tenant;

  beforeEach(async () => {
    t = await tenant();
  });
  afterEach(() => t.receiver.close());

  it('none → Anonymous: a new device without authorization makes an anonymous user', async () => {
    const widget = new Widget(t.account);
    const answer = await widget.register({ type: 3, version: '2.1.0', referer: 'https://shop.example/' });
    expect(answer.status).to.equal(200);
    expect(answer.body).to.deep.include({
      status: 'SUCCESS',
      notifications: [{ type: 'success', message: 'device_successfully_subscribed' }],
    });
    expect(answer.body.metadata).to.deep.include({ values: { url: 'devices' }, method: 'post' });
    const user = await em().findOneOrFail(UserSchema, { id: answer.body.data.userId });
    expect(user).to.include({ kind: 'anonymous', uniqueIdentifier: null, ownerServiceId: t.service.id });
    const device = await em().findOneOrFail(DeviceSchema, { uniqueAppDeviceId: widget.deviceId });
    expect(device).to.include({ userId: user.id, type: 3, version: '2.1.0', referer: 'https://shop.example/' });

    const again = await widget.register();
    expect(again.body.data.userId, 'the same device keeps its user').to.equal(user.id);
  });

  it('none → Registered: a new device with authorization makes the registered user, announced by user_registered', async () => {
    const widget = new Widget(t.account).signIn('customer-1');
    const answer = await widget.register({ userAdditionalInformation: { plan: 'gold' } });
    expect(answer.status).to.equal(200);
    const user = await em().findOneOrFail(UserSchema, { id: answer.body.data.userId });
    expect(user).to.include({ kind: 'registered', uniqueIdentifier: 'customer-1' });
    expect(user.additionalInformation).to.deep.equal({ plan: 'gold' });

    const [delivery] = await t.receiver.waitFor(1);
    const payload = delivery?.json as Record<string, unknown>;
    expect(payload).to.deep.include({
      type: 'message',
      message: 'user_registered',
      typeId: 4,
      accountIdentification: t.account.identification,
      accountId: t.account.id,
    });
    expect(payload.user).to.deep.equal({ id: String(user.id), uniqueIdentifier: 'customer-1', additionalInformation: { plan: 'gold' } });
    expect(payload).to.not.have.property('requestUrl');
  });

  it('Anonymous → Registered: merges the conversation, changes the id and tells the owner', async () => {
    const widget = new Widget(t.account);
    const anonymousId = (await widget.register({ userAdditionalInformation: { cart: 3 } })).body.data.userId;
    await widget.send('before login 1');
    await widget.send('before login 2');
    await t.receiver.waitFor(2);

    widget.signIn('customer-merge');
    const merged = await widget.register({ referer: 'https://shop.example/login' });
    expect(merged.status).to.equal(200);
    const registeredId = merged.body.data.userId;
    expect(registeredId).to.not.equal(anonymousId);
    await widget.send('after login');

    const history = await widget.messages();
    expect(history.status).to.equal(200);
    expect(history.body.data.map((m) => m.message)).to.deep.equal(['after login', 'before login 2', 'before login 1']);

    const tombstone = await em().findOneOrFail(UserSchema, { id: anonymousId });
    expect(tombstone.mergedIntoUserId).to.equal(registeredId);
    const registered = await em().findOneOrFail(UserSchema, { id: registeredId });
    expect(registered).to.include({ kind: 'registered', uniqueIdentifier: 'customer-merge', ownerServiceId: t.service.id });
    expect(registered.additionalInformation, 'the anonymous information carries over').to.deep.equal({ cart: 3 });

    const requests = await t.receiver.waitFor(5);
    const bodies = requests.map((r) => r.json as Record<string, unknown>);
    const merging = bodies.find((b) => 'updateUser' in b);
    expect(merging).to.deep.equal({
      updateUser: {
        oldUserId: anonymousId,
        newUserId: registeredId,
        uniqueIdentifier: 'customer-merge',
        additionalInformation: '{"cart":3}',
      },
      accountId: t.account.id,
      requestUrl: 'https://shop.example/login',
    });
    expect(bodies.filter((b) => b.message === 'user_registered')).to.have.length(1);
    const after = bodies.find((b) => b.message === 'after login') as { user: { id: string } };
    expect(after.user.id).to.equal(String(registeredId));
  });

  it('Anonymous → Registered into an existing customer: both histories, in time order', async () => {
    const phone = new Widget(t.account).signIn('customer-both');
    await phone.register();
    await phone.send('from the phone, first');
    const laptop = new Widget(t.account);
    await laptop.register();
    await laptop.send('from the laptop, anonymous');
    await phone.send('from the phone, second');
    laptop.signIn('customer-both');
    expect((await laptop.register()).status).to.equal(200);

    const history = await laptop.messages();
    expect(history.body.data.map((m) => m.message)).to.deep.equal([
      'from the phone, second',
      'from the laptop, anonymous',
      'from the phone, first',
    ]);
    const phoneHistory = await phone.messages();
    expect(phoneHistory.body.data.map((m) => m.id)).to.deep.equal(history.body.data.map((m) => m.id));
  });

  it('Registered → Registered: a new device of the same customer gets the same history', async () => {
    const first = new Widget(t.account).signIn('customer-2');
    const userId = (await first.register()).body.data.userId;
    await first.send('hello from the first device');
    const second = new Widget(t.account).signIn('customer-2');
    const answer = await second.register({ type: 1 });
    expect(answer.body.data.userId).to.equal(userId);
    const history = await second.messages();
    expect(history.body.data.map((m) => m.message)).to.deep.equal(['hello from the first device']);
  });

  it('Registered → anonymous on the same device: device_not_registered, and nothing changes', async () => {
    const widget = new Widget(t.account).signIn('customer-3');
    const userId = (await widget.register()).body.data.userId;
    widget.authorization = undefined;
    const answer = await widget.register({ userAdditionalInformation: { sneaky: true } });
    expect(answer.status).to.equal(403);
    // The spec's code first on its unversioned paths; the web library's code beside it.
    expect(answer.body.notifications).to.deep.equal([
      { type: 'error', message: 'device_not_registered' },
      { type: 'error', message: 'device_requires_authorization' },
    ]);
    const device = await em().findOneOrFail(DeviceSchema, { uniqueAppDeviceId: widget.deviceId });
    expect(device.userId).to.equal(userId);
    const user = await em().findOneOrFail(UserSchema, { id: userId });
    expect(user.additionalInformation).to.equal(null);
  });

  it('a logout on the versioned paths leads with device_requires_authorization, and a fresh device starts anew', async () => {
    const widget = new Widget(t.account, undefined, undefined, '/clientApi/v1.9').signIn('customer-logout');
    const userId = (await widget.register()).body.data.userId;
    await widget.send('before the logout');
    widget.authorization = undefined;
    const answer = await widget.register();
    expect(answer.status).to.equal(403);
    // The Parley web library starts a fresh anonymous device only when this code comes first.
    expect(answer.body.notifications.map((n) => n.message)).to.deep.equal(['device_requires_authorization', 'device_not_registered']);
    const device = await em().findOneOrFail(DeviceSchema, { uniqueAppDeviceId: widget.deviceId });
    expect(device.userId, 'nothing changed on the device').to.equal(userId);

    const fresh = new Widget(t.account, undefined, undefined, '/clientApi/v1.9');
    const anonymous = await fresh.register();
    expect(anonymous.status).to.equal(200);
    expect(anonymous.body.data.userId).to.not.equal(userId);
    expect((await fresh.messages()).body.data).to.deep.equal([]);
  });

  it('a registered device signed in as another customer moves to them and never shows the first one’s history', async () => {
    const widget = new Widget(t.account).signIn('customer-alice');
    const alice = (await widget.register()).body.data.userId;
    await widget.send('alice’s private question');
    widget.signIn('customer-bob');
    const bob = (await widget.register()).body.data.userId;
    expect(bob).to.not.equal(alice);
    const history = await widget.messages();
    expect(history.body.data).to.deep.equal([]);

    const aliceAgain = new Widget(t.account).signIn('customer-alice');
    await aliceAgain.register();
    expect((await aliceAgain.messages()).body.data.map((m) => m.message)).to.deep.equal(['alice’s private question']);
  });

  it('replaces the user’s additional information and stores the device fields', async () => {
    const widget = new Widget(t.account);
    const userId = (await widget.register({ userAdditionalInformation: { a: 1 } })).body.data.userId;
    await widget.register({
      userAdditionalInformation: { b: 2 },
      pushToken: 'token-123',
      pushType: 5,
      pushEnabled: true,
      type: 2,
      version: '9.9',
    });
    const user = await em().findOneOrFail(UserSchema, { id: userId });
    expect(user.additionalInformation).to.deep.equal({ b: 2 });
    const device = await em().findOneOrFail(DeviceSchema, { uniqueAppDeviceId: widget.deviceId });
    expect(device).to.include({ pushToken: 'token-123', pushType: 5, pushEnabled: true, type: 2, version: '9.9' });
  });

  describe('authorization header', () => {
    it('refuses expired, forged and malformed values with 401, creating nothing', async () => {
      const expired = authFor(t.account, 'customer-x', Math.floor(Date.now() / 1000) - 10);
      const otherAccount = await createAccount();
      const forged = authFor({ ...t.account, authorizationSecret: otherAccount.authorizationSecret }, 'customer-x');
      const tampered = Buffer.from(
        Buffer.from(authFor(t.account, 'customer-x'), 'base64').toString().replace('customer-x', 'customer-y'),
      ).toString('base64');
      const cases: Array<[string, string]> = [
        [expired, 'authorization_expired'],
        [forged, 'invalid_authorization'],
        [tampered, 'invalid_authorization'],
        ['not base64 at all!', 'invalid_authorization'],
        [Buffer.from('only|three|parts').toString('base64'), 'invalid_authorization'],
      ];
      for (const [value, code] of cases) {
        const widget = new Widget(t.account, newDeviceId(), value);
        const answer = await widget.register();
        expect(answer.status, code).to.equal(401);
        expect(answer.body.notifications[0]?.message).to.equal(code);
        expect(await em().count(DeviceSchema, { uniqueAppDeviceId: widget.deviceId })).to.equal(0);
      }
      expect(await em().count(UserSchema, { accountId: t.account.id })).to.equal(0);
    });

    it('logs in with a header made as Parley documents it: the key from the customer’s own secret, never recomputed', async () => {
      const hmac = (key: string, data: string) => createHmac('sha512', key).update(data).digest('hex');
      const validUntil = Math.floor(Date.now() / 1000) + 3600;
      // What an existing Parley customer's backend issues: its application secret is its own.
      const customerAuthenticationKey = hmac('the shop’s own application secret', 'customer-9001');
      const verifyHash = hmac(t.account.authorizationSecret, `customer-9001${customerAuthenticationKey}${validUntil}`);
      const header = Buffer.from(`customer-9001|${customerAuthenticationKey}|${validUntil}|${verifyHash}`).toString('base64');
      const answer = await new Widget(t.account, newDeviceId(), header, '/clientApi/v1.9').register({ type: 1 });
      expect(answer.status, answer.text).to.equal(200);
      const user = await em().findOneOrFail(UserSchema, { id: answer.body.data.userId });
      expect(user).to.include({ kind: 'registered', uniqueIdentifier: 'customer-9001' });

      // The verifyHash covers all three fields: another key with the same hash is forged.
      const swapped = Buffer.from(`customer-9001|${hmac('another secret', 'customer-9001')}|${validUntil}|${verifyHash}`).toString(
        'base64',
      );
      const forged = await new Widget(t.account, newDeviceId(), swapped).register();
      expect(forged.status).to.equal(401);
      expect(forged.body.notifications[0]?.message).to.equal('invalid_authorization');
    });

    it('refuses a header re-split into another customer’s, whichever way the field boundaries move (401, nothing made)', async () => {
      const hmac = (key: string, data: string) => createHmac('sha512', key).update(data).digest('hex');
      const validUntil = String(Math.floor(Date.now() / 1000) + 3600);
      // A key ending in 0, so that the boundary between key and validUntil can move too ("0" + validUntil is the same number).
      let secret = 0;
      while (!hmac(`application secret ${secret}`, 'customer-123').endsWith('0')) secret += 1;
      const key = hmac(`application secret ${secret}`, 'customer-123');
      const verifyHash = hmac(t.account.authorizationSecret, `customer-123${key}${validUntil}`);
      const header = (identification: string, k: string, until: string) =>
        Buffer.from(`${identification}|${k}|${until}|${verifyHash}`).toString('base64');
      // Genuine: it signs in as customer-123.
      const genuine = await new Widget(t.account, newDeviceId(), header('customer-123', key, validUntil)).register();
      expect(genuine.status, genuine.text).to.equal(200);

      // The same signed bytes (identification + key + validUntil) read with other boundaries.
      const resplit: Array<[string, string, string, string]> = [
        ['identification’s last character into the key', 'customer-12', `3${key}`, validUntil],
        ['the key’s first characters into the identification', `customer-123${key.slice(0, 3)}`, key.slice(3), validUntil],
        ['the key’s last 0 into validUntil', 'customer-12', `3${key.slice(0, -1)}`, `0${validUntil}`],
      ];
      for (const [how, identification, k, until] of resplit) {
        const widget = new Widget(t.account, newDeviceId(), header(identification, k, until));
        const answer = await widget.register();
        expect(answer.status, `${how}: ${answer.text}`).to.equal(401);
        expect(answer.body.notifications[0]?.message, how).to.equal('invalid_authorization');
        expect(await em().count(DeviceSchema, { uniqueAppDeviceId: widget.deviceId }), how).to.equal(0);
      }
      const users = await em().find(UserSchema, { accountId: t.account.id, kind: 'registered' });
      expect(users.map((u) => u.uniqueIdentifier)).to.deep.equal(['customer-123']);
    });

    it('accepts only a 128-hex-character key and canonical decimal seconds in validUntil', async () => {
      const hmac = (key: string, data: string) => createHmac('sha512', key).update(data).digest('hex');
      const now = Math.floor(Date.now() / 1000);
      const signed = (key: string, validUntil: string) =>
        Buffer.from(`customer-77|${key}|${validUntil}|${hmac(t.account.authorizationSecret, `customer-77${key}${validUntil}`)}`).toString(
          'base64',
        );
      const key = hmac('own secret', 'customer-77');
      const cases: Array<[string, string, number]> = [
        [key, String(now + 3600), 200],
        [key.toUpperCase(), String(now + 3600), 200],
        ['a-short-key', String(now + 3600), 401],
        [key.slice(0, 127), String(now + 3600), 401],
        [`${key}0`, String(now + 3600), 401],
        [`${key.slice(0, 127)}g`, String(now + 3600), 401],
        [key, `0${now + 3600}`, 401],
        [key, `+${now + 3600}`, 401],
        [key, `${now + 3600}.0`, 401],
        [key, `000000000000${now + 3600}`, 401],
      ];
      for (const [k, validUntil, status] of cases) {
        const answer = await new Widget(t.account, newDeviceId(), signed(k, validUntil)).register();
        expect(answer.status, `${k} ${validUntil}`).to.equal(status);
        if (status === 401) expect(answer.body.notifications[0]?.message).to.equal('invalid_authorization');
      }
    });

    it('refuses a header valid for longer than the configured maximum (30 days by default)', async () => {
      const answer = await new Widget(
        t.account,
        newDeviceId(),
        authFor(t.account, 'customer-forever', Math.floor(Date.now() / 1000) + 31 * 86400),
      ).register();
      expect(answer.status).to.equal(401);
      expect(answer.body.notifications[0]?.message).to.equal('authorization_too_long');
      const month = await new Widget(
        t.account,
        newDeviceId(),
        authFor(t.account, 'customer-month', Math.floor(Date.now() / 1000) + 29 * 86400),
      ).register();
      expect(month.status).to.equal(200);
    });

    it('accepts an identification containing the separator', async () => {
      const widget = new Widget(t.account).signIn('tenant|customer|7');
      const answer = await widget.register();
      expect(answer.status).to.equal(200);
      const user = await em().findOneOrFail(UserSchema, { id: answer.body.data.userId });
      expect(user.uniqueIdentifier).to.equal('tenant|customer|7');
    });
  });

  describe('identification header', () => {
    it('refuses a missing or malformed header, a short device id and an unknown account', async () => {
      const api = new Widget(t.account);
      const cases: Array<[Record<string, string>, number, string]> = [
        [{}, 400, 'identification_required'],
        [{ 'x-iris-identification': 'no-colon-here' }, 400, 'invalid_identification'],
        [{ 'x-iris-identification': `${t.account.identification}:short` }, 400, 'invalid_device_id'],
        [{ 'x-iris-identification': `${t.account.identification}:has spaces in it` }, 400, 'invalid_device_id'],
        [{ 'x-iris-identification': `unknownAccount0:${newDeviceId()}` }, 404, 'account_not_found'],
      ];
      for (const [headers, status, code] of cases) {
        const answer = await fetch(`${api.baseUrl}/devices`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: '{}',
        });
        const body = (await answer.json()) as { notifications: Array<{ message: string }> };
        expect(answer.status, code).to.equal(status);
        expect(body.notifications[0]?.message).to.equal(code);
      }
    });

    it('refuses a body with wrong types, listing every problem', async () => {
      const answer = await new Widget(t.account).register({ type: 7, pushType: 'x', userAdditionalInformation: 'text' });
      expect(answer.status).to.equal(422);
      expect(answer.body.notifications.map((n) => n.field)).to.have.members([
        'body.type',
        'body.pushType',
        'body.userAdditionalInformation',
      ]);
    });
  });

  describe('concurrency', () => {
    it('registers one new device 20 times at once as one user and one device', async () => {
      const deviceId = newDeviceId();
      const answers = await Promise.all(Array.from({ length: 20 }, () => new Widget(t.account, deviceId).register()));
      expect(answers.map((a) => a.status)).to.deep.equal(Array(20).fill(200));
      expect(new Set(answers.map((a) => a.body.data.userId)).size).to.equal(1);
      expect(await em().count(DeviceSchema, { uniqueAppDeviceId: deviceId })).to.equal(1);
      expect(await em().count(UserSchema, { accountId: t.account.id })).to.equal(1);
    });

    it('merges one device once when two logins race', async () => {
      const widget = new Widget(t.account);
      const anonymousId = (await widget.register()).body.data.userId;
      const auth = authFor(t.account, 'customer-race');
      const answers = await Promise.all([1, 2, 3].map(() => new Widget(t.account, widget.deviceId, auth).register()));
      expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200]);
      expect(new Set(answers.map((a) => a.body.data.userId)).size).to.equal(1);
      expect(await em().count(UserSchema, { accountId: t.account.id, kind: 'registered' })).to.equal(1);
      // Read right after the answers: one merge was enqueued (and then delivered), not three.
      const rows = await outboxRows({ serviceId: t.service.id });
      expect(rows.filter((r) => r.kind === 'client_merging')).to.have.length(1);
      const delivered = await receivedExactly(t.receiver, t.service.id, rows.length);
      const merges = delivered.filter((r) => 'updateUser' in (r.json as object));
      expect(merges).to.have.length(1);
      expect((merges[0]?.json as { updateUser: { oldUserId: number } }).updateUser.oldUserId).to.equal(anonymousId);
    });

    it('creates one registered user when two new devices of a new customer register at once', async () => {
      const answers = await Promise.all([1, 2, 3, 4].map(() => new Widget(t.account).signIn('customer-new').register()));
      expect(new Set(answers.map((a) => a.body.data.userId)).size).to.equal(1);
      expect(await em().count(UserSchema, { accountId: t.account.id })).to.equal(1);
    });
  });
});
