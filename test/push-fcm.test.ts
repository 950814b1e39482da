// Pushes through FCM HTTP v1 against loopback stand-ins for Google's token and send endpoints:
// the JWT bearer grant (its signature verified with the service account's public key), the
// exact send request and the data map the Parley apps parse, typing events, order per device,
// retries with Retry-After, dead pushes redelivered, and a refused token removed.
import { expect } from 'chai';
import got from 'got';
import { FcmClient } from '../src/push/fcm.ts';
import { DeviceSchema } from '../src/db/entities/index.ts';
import { AndroidLibrary, BEA, IosLibrary, TeamDesk, dataOf, expectAnswer } from './support/parley-clients.ts';
import { Receiver } from './support/receiver.ts';
import { until } from './support/until.ts';
import {
  googleTokenStandIn,
  parleyData,
  pushRows,
  pushServer,
  pushTenant,
  pushesSettled,
  serviceAccount,
  type PushWorld,
  verifiedJwt,
  type ServiceAccount,
} from './support/push.ts';

describe('push: FCM', function () {
  this.timeout(60_000);
  let google: ServiceAccount;
  let tokens: Receiver;
  let fcm: Receiver;
  let world: PushWorld;

  before(async () => {
    google = serviceAccount();
    tokens = await googleTokenStandIn(google);
    fcm = await Receiver.start();
    world = await pushServer(`${tokens.url}/token`, fcm.url);
  });
  after(async () => {
    await world.server.stop();
    await tokens.close();
    await fcm.close();
  });
  beforeEach(() => {
    fcm.requests.length = 0;
    fcm.respondWith(() => undefined);
  });

  async function fcmTenant(device: Record<string, unknown> = {}) {
    const t = await pushTenant(world, { pushToken: `fcm-token-${Math.random()}`, pushType: 6, pushEnabled: true, ...device });
    const { private_key, client_email, project_id } = google;
    const saved = await world.api.put(`/adminApi/accounts/${t.account.id}/push-settings/fcm`, {
      token: world.token,
      json: { serviceAccount: { type: 'service_account', project_id, client_email, private_key } },
    });
    expect(saved.status, saved.text).to.equal(200);
    return t;
  }

  it('sends one FCM message per agent message, with an access token from a verified JWT bearer grant', async () => {
    const t = await fcmTenant({ pushToken: 'token-android-1' });
    const id = await t.agentSays('Hello from Ada');
    const rows = await pushesSettled(world.server, t.account.id);
    expect(rows.map((r) => [r.kind, r.state])).to.deep.equal([['push_message', 'delivered']]);

    const sends = fcm.requests.filter((r) => (r.json as { message: { token: string } }).message.token === 'token-android-1');
    expect(sends).to.have.length(1);
    const [send] = sends;
    expect(send?.method).to.equal('POST');
    expect(send?.path).to.equal(`/v1/projects/${google.project_id}/messages:send`);
    expect(send?.headers.authorization).to.equal('Bearer ya29.test-access-token');
    const message = (send?.json as { message: { token: string; data: unknown; android: unknown } }).message;
    expect(message.android).to.deep.equal({ priority: 'high' });
    const data = parleyData(message.data);
    expect(data.message).to.equal('Hello from Ada');
    expect(data.parley.type).to.equal('message');
    expect(data.parley.object).to.include({ id, typeId: 2, message: 'Hello from Ada' });
    expect(data.parley.object.agent).to.deep.equal({ id: 7, name: 'Ada', avatar: null, isTyping: null });
    // The message object is GET /messages/{id}'s.
    const read = await t.widget.call<Record<string, unknown>>('GET', `/messages/${id}`);
    expect(data.parley.object).to.deep.equal(read.body.data);

    // The grant: a JWT for the service account, for FCM, audience Google's token URL.
    const grant = tokens.requests.find((r) => r.answeredAt !== undefined);
    expect(grant?.headers['content-type']).to.match(/application\/x-www-form-urlencoded/);
    const claims = verifiedJwt(new URLSearchParams(grant?.body).get('assertion') ?? '', google.publicKey);
    expect(claims).to.include({
      iss: google.client_email,
      scope: 'https://www.googleapis.com/auth/firebase.messaging',
      aud: 'https://oauth2.googleapis.com/token',
    });
  });

  it("pushes an operator's answer from the team inbox to the Parley Android app: the data map it parses, the operator as the agent", async () => {
    const t = await fcmTenant();
    const android = new AndroidLibrary({ url: `${world.server.url}/`, secret: t.account.identification });
    const userId = dataOf<{ userId: number }>(expectAnswer('deviceRegistered', await android.register())).userId;
    const team = await TeamDesk.signIn(world.server.url, world.token, t.account.id);
    const id = await team.say(userId, { message: 'Bea here, I am looking into it.' });
    await pushesSettled(world.server, t.account.id);
    const sends = fcm.requests.filter((r) => (r.json as { message: { token: string } }).message.token === android.pushToken);
    expect(sends).to.have.length(1);
    const message = (sends[0]?.json as { message: { data: unknown; android: unknown } }).message;
    expect(message.android).to.deep.equal({ priority: 'high' });
    const data = parleyData(message.data);
    expect(data.message).to.equal('Bea here, I am looking into it.');
    expect(data.parley.type).to.equal('message');
    expect(data.parley.object).to.include({ id, typeId: 2, message: 'Bea here, I am looking into it.' });
    expect(data.parley.object.agent).to.deep.equal({ id: team.operatorId, name: BEA.name, avatar: BEA.avatar, isTyping: null });
    // The object is what the app reads with GET messages/{id}, held to the shape it decodes.
    const read = expectAnswer('oneMessage', await android.get(id));
    expect(data.parley.object).to.deep.equal(dataOf<Record<string, unknown>>(read));
  });

  it("pushes agent system messages and agent typing; nothing for the user's own messages", async () => {
    const t = await fcmTenant();
    const own = await t.widget.send('from the user');
    expect(own.status, own.text).to.equal(200);
    expect(await pushRows(world.server, t.account.id), "the user's own message").to.deep.equal([]);

    await t.typing(true);
    await t.typing(false);
    await t.agentSays('Ada left the chat', 5);
    const rows = await pushesSettled(world.server, t.account.id);
    expect(rows.map((r) => [r.kind, r.state])).to.deep.equal([
      ['push_event', 'delivered'],
      ['push_event', 'delivered'],
      ['push_message', 'delivered'],
    ]);
    const token = (await world.server.deps.db.orm.em.fork().findOneOrFail(DeviceSchema, { userId: t.userId })).pushToken;
    const sends = fcm.requests.filter((r) => (r.json as { message: { token: string } }).message.token === token);
    const parsed = sends.map((s) => parleyData((s.json as { message: { data: unknown } }).message.data));
    expect(parsed.map((p) => [p.parley.type, p.parley.object.name ?? p.parley.object.typeId])).to.deep.equal([
      ['event', 'startTyping'],
      ['event', 'stopTyping'],
      ['message', 5],
    ]);
    expect(parsed[0]?.message, 'events show no notification').to.equal(undefined);
  });

  it("pushes to the Parley Android app, whose registration has a token and no pushEnabled; iOS's pushEnabled false still turns pushes off", async () => {
    const t = await fcmTenant();
    const sentTo = (token: string | null) =>
      fcm.requests.filter((r) => (r.json as { message: { token: string } }).message.token === token).length;
    const say = async (userId: number, text: string) => {
      const sent = await world.api.post(`/users/${userId}/messages`, {
        token: t.service.apiKey,
        json: { message: text, agent: { id: 7, name: 'Ada' } },
      });
      expect(sent.status, sent.text).to.equal(201);
    };
    const deviceOf = (uniqueAppDeviceId: string) =>
      world.server.deps.db.orm.em.fork().findOneOrFail(DeviceSchema, { accountId: t.account.id, uniqueAppDeviceId });

    // The Android library's Device, exactly: pushToken, pushType, userAdditionalInformation, referrer, type, version.
    const android = new AndroidLibrary({ url: `${world.server.url}/`, secret: t.account.identification });
    expect(JSON.parse(android.deviceBody())).to.have.keys(
      'pushToken',
      'pushType',
      'userAdditionalInformation',
      'referrer',
      'type',
      'version',
    );
    const registered = expectAnswer('deviceRegistered', await android.register());
    const androidUser = dataOf<{ userId: number }>(registered).userId;
    expect(await deviceOf(android.uniqueDeviceIdentifier)).to.include({ pushEnabled: true, pushToken: android.pushToken });
    await say(androidUser, 'Hello, Android');
    expect((await pushesSettled(world.server, t.account.id)).map((r) => [r.kind, r.state])).to.deep.equal([['push_message', 'delivered']]);
    expect(sentTo(android.pushToken)).to.equal(1);

    // A later registration with a new token and still no pushEnabled keeps pushes on, to the new token.
    android.pushToken = 'android-token-renewed';
    expectAnswer('deviceRegistered', await android.register());
    await say(androidUser, 'Hello again');
    await pushesSettled(world.server, t.account.id);
    expect(sentTo('android-token-renewed')).to.equal(1);

    // iOS says pushEnabled, always: false is off, with a token or not.
    const ios = new IosLibrary({ baseUrl: world.server.url, secret: t.account.identification });
    ios.pushEnabled = false;
    const iosUser = dataOf<{ userId: number }>(expectAnswer('deviceRegistered', await ios.register())).userId;
    expect(await deviceOf(ios.deviceId)).to.include({ pushEnabled: false, pushToken: ios.pushToken });
    const before = (await pushRows(world.server, t.account.id)).length;
    await say(iosUser, 'not pushed');
    expect(await pushRows(world.server, t.account.id)).to.have.length(before);
    ios.pushEnabled = true;
    expectAnswer('deviceRegistered', await ios.register());
    await say(iosUser, 'pushed');
    await pushesSettled(world.server, t.account.id);
    expect(sentTo(ios.pushToken)).to.equal(1);
  });

  it('writes nothing with pushEnabled false, without a token, or without settings for the type', async () => {
    const off = await fcmTenant({ pushEnabled: false });
    await off.agentSays('not pushed');
    await off.typing(true);
    expect(await pushRows(world.server, off.account.id)).to.deep.equal([]);

    const noToken = await fcmTenant({ pushToken: null });
    await noToken.agentSays('not pushed');
    expect(await pushRows(world.server, noToken.account.id)).to.deep.equal([]);

    // A webhook push type, but the account has only FCM settings.
    const webhookType = await fcmTenant({ pushType: 4 });
    await webhookType.agentSays('not pushed');
    expect(await pushRows(world.server, webhookType.account.id)).to.deep.equal([]);
  });

  it('keeps per-device order through retries, honouring Retry-After', async () => {
    const t = await fcmTenant({ pushToken: 'ordered-token' });
    let failed = 0;
    fcm.respondWith((request) => {
      const data = parleyData((request.json as { message: { data: unknown } }).message.data);
      // The first attempt of the first message is refused for now; the others must wait behind it.
      if (data.message === 'one' && failed === 0) {
        failed += 1;
        return { status: 503, headers: { 'retry-after': '1' }, body: JSON.stringify({ error: { status: 'UNAVAILABLE' } }) };
      }
      return undefined;
    });
    await t.agentSays('one');
    await t.agentSays('two');
    await t.agentSays('three');
    const rows = await pushesSettled(world.server, t.account.id);
    expect(rows.map((r) => [r.state, r.attempts])).to.deep.equal([
      ['delivered', 2],
      ['delivered', 1],
      ['delivered', 1],
    ]);
    const sends = fcm.requests.filter((r) => (r.json as { message: { token: string } }).message.token === 'ordered-token');
    expect(sends.map((s) => parleyData((s.json as { message: { data: unknown } }).message.data).message)).to.deep.equal([
      'one',
      'one',
      'two',
      'three',
    ]);
    // The schedule alone would retry after ~0.2 s; FCM asked for 1 s.
    expect((sends[1]?.at ?? 0) - (sends[0]?.at ?? 0), 'Retry-After: 1 second').to.be.at.least(950);
  });

  it('removes an unregistered token and does not retry; a dead push is in the log and redeliverable', async () => {
    const t = await fcmTenant({ pushToken: 'stale-token' });
    fcm.respondWith((request) =>
      (request.json as { message: { token: string } }).message.token === 'stale-token'
        ? {
            status: 404,
            body: JSON.stringify({
              error: {
                code: 404,
                status: 'NOT_FOUND',
                message: 'Requested entity was not found.',
                details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }],
              },
            }),
          }
        : undefined,
    );
    await t.agentSays('to a stale token');
    const rows = await pushesSettled(world.server, t.account.id);
    expect(rows.map((r) => [r.state, r.attempts])).to.deep.equal([['dead', 1]]);
    const device = await world.server.deps.db.orm.em.fork().findOneOrFail(DeviceSchema, { userId: t.userId });
    expect(device.pushToken).to.equal(null);
    // Nothing more is written for the device until the app registers a token again.
    await t.agentSays('not pushed');
    expect(await pushRows(world.server, t.account.id)).to.have.length(1);

    const log = await world.api.get<Array<{ id: string; deviceId: number; state: string; lastStatus: number; payload: unknown }>>(
      `/adminApi/accounts/${t.account.id}/push-deliveries?state=dead`,
      { token: world.token },
    );
    expect(log.status, log.text).to.equal(200);
    expect(log.body.data.map((d) => [d.deviceId, d.state, d.lastStatus])).to.deep.equal([[device.id, 'dead', 404]]);
    expect(parleyData(log.body.data[0]?.payload).message).to.equal('to a stale token');

    // The app registers a new token; the operator redelivers the dead push to it.
    const again = await t.widget.register({ type: 1, pushToken: 'fresh-token', pushType: 6, pushEnabled: true });
    expect(again.status, again.text).to.equal(200);
    const redelivered = await world.api.post(`/adminApi/deliveries/${log.body.data[0]?.id}/redeliver`, { token: world.token });
    expect(redelivered.status, redelivered.text).to.equal(200);
    const settled = await pushesSettled(world.server, t.account.id);
    expect(settled.map((r) => r.state)).to.deep.equal(['delivered']);
    expect(fcm.requests.filter((r) => (r.json as { message: { token: string } }).message.token === 'fresh-token')).to.have.length(1);
  });

  it('ends pushes dead, sending nothing, once the device switched pushes off', async () => {
    const t = await fcmTenant({ pushToken: 'switch-off' });
    // FCM asks to wait; meanwhile the app switches pushes off.
    fcm.respondWith((request) =>
      (request.json as { message: { token: string } }).message.token === 'switch-off'
        ? { status: 503, headers: { 'retry-after': '3' }, body: JSON.stringify({ error: { status: 'UNAVAILABLE' } }) }
        : undefined,
    );
    await t.agentSays('one');
    await t.agentSays('two');
    const off = await t.widget.register({ type: 1, pushToken: 'switch-off', pushType: 6, pushEnabled: false });
    expect(off.status, off.text).to.equal(200);
    const rows = await pushesSettled(world.server, t.account.id);
    expect(rows.map((r) => [r.state, r.attempts])).to.deep.equal([
      ['dead', 2],
      ['dead', 1],
    ]);
    expect(rows.map((r) => r.last_error)).to.deep.equal(
      Array(2).fill('device no longer accepts pushes (switched off, no token, or no push settings for its type)'),
    );
    expect(fcm.requests.filter((r) => (r.json as { message: { token: string } }).message.token === 'switch-off')).to.have.length(1);
  });

  it('removes a token FCM calls invalid (INVALID_ARGUMENT on message.token)', async () => {
    const t = await fcmTenant({ pushToken: 'not-a-token' });
    fcm.respondWith((request) =>
      (request.json as { message: { token: string } }).message.token === 'not-a-token'
        ? {
            status: 400,
            body: JSON.stringify({
              error: {
                code: 400,
                status: 'INVALID_ARGUMENT',
                message: 'The registration token is not a valid FCM registration token',
                details: [
                  { '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'INVALID_ARGUMENT' },
                  { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'message.token' }] },
                ],
              },
            }),
          }
        : undefined,
    );
    await t.agentSays('to a bad token');
    expect((await pushesSettled(world.server, t.account.id)).map((r) => [r.state, r.attempts])).to.deep.equal([['dead', 1]]);
    const device = await world.server.deps.db.orm.em.fork().findOneOrFail(DeviceSchema, { userId: t.userId });
    expect(device.pushToken).to.equal(null);
  });

  it('an iOS device gets the APNs alert for messages and a silent push for typing', async () => {
    const t = await fcmTenant({ type: 2, pushToken: 'ios-token' });
    await t.agentSays('Hi iPhone');
    await t.typing(true);
    await pushesSettled(world.server, t.account.id);
    const sends = fcm.requests.filter((r) => (r.json as { message: { token: string } }).message.token === 'ios-token');
    const apns = sends.map((s) => (s.json as { message: { apns: unknown } }).message.apns);
    expect(apns).to.deep.equal([
      { payload: { aps: { alert: { body: 'Hi iPhone' }, sound: 'default', 'mutable-content': 1 } } },
      { headers: { 'apns-push-type': 'background', 'apns-priority': '5' }, payload: { aps: { 'content-available': 1 } } },
    ]);
  });

  it('counts pushes per kind and outcome', async () => {
    const metrics = await world.api.get('/metrics');
    expect(metrics.text).to.match(/palaver_push_attempts_total\{kind="fcm",outcome="sent"\} \d+/);
    expect(metrics.text).to.match(/palaver_push_attempts_total\{kind="fcm",outcome="dead"\} \d+/);
    expect(metrics.text).to.match(/palaver_push_attempts_total\{kind="fcm",outcome="failed"\} \d+/);
  });

  // A token endpoint slower than the timeout must make a retry, not an exception thrown outside
  // the request's promise (node-fetch's, under gaxios' timeout) that mocha reports as uncaught
  // and a production node dies of.
  it('retries a push whose access token does not come within the timeout, and throws nothing elsewhere', async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow = await Receiver.start();
    slow.respondWith(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{}', until: released }));
    try {
      const client = new FcmClient(
        { tokenUrl: `${slow.url}/token`, sendUrl: fcm.url, timeoutMs: 50 },
        got.extend({ throwHttpErrors: false }),
      );
      const { private_key, client_email, project_id } = google;
      const outcome = await client.send(
        { projectId: project_id, clientEmail: client_email, privateKey: private_key },
        { token: 'fcm-token', deviceType: 1, data: { message: 'hello' } },
      );
      expect(outcome).to.deep.include({ kind: 'retry', status: null });
      expect(outcome)
        .to.have.property('error')
        .that.matches(/^FCM access token: .*abort/i);
      expect(slow.requests).to.have.length(1);
      expect(fcm.requests, 'nothing sent without a token').to.deep.equal([]);
      // The request's end plays out too: what was thrown there would fail this test.
      release();
      await until(
        'the token request closed',
        () => Promise.resolve(slow.requests[0]?.closedAt),
        (at) => at !== undefined,
      );
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      release();
      await slow.close();
    }
  });
});
