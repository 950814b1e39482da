// Pushes to a customer's own push webhook (pushType 4) and to that webhook behind OAuth
// (pushType 5), against loopback stand-ins: the signed request and its body, the data map the
// apps parse, the client-credentials token (cached, renewed after a 401), a 410 removing the
// token, and order per device.
import { expect } from 'chai';
import { DeviceSchema } from '../src/db/entities/index.ts';
import { verify } from './support/deliveries.ts';
import { Receiver } from './support/receiver.ts';
import { Widget } from './support/widget.ts';
import { oauthStandIn, parleyData, pushRows, pushServer, pushTenant, pushesSettled, type PushWorld } from './support/push.ts';

interface PushBody {
  pushToken: string;
  pushType: number;
  deviceType: number;
  userId: number;
  data: unknown;
}

describe('push: webhooks', function () {
  this.timeout(60_000);
  let world: PushWorld;
  let hook: Receiver;
  let oauth: Receiver;

  before(async () => {
    // FCM is not used here: its addresses point nowhere that answers.
    world = await pushServer('http://127.0.0.1:9/token', 'http://127.0.0.1:9');
    hook = await Receiver.start();
    oauth = await oauthStandIn('palaver-client', 's3cr3t:with/odd chars');
  });
  after(async () => {
    await world.server.stop();
    await hook.close();
    await oauth.close();
  });
  beforeEach(() => {
    hook.requests.length = 0;
    oauth.requests.length = 0;
    hook.respondWith(() => undefined);
  });

  const forToken = (token: string) => hook.requests.filter((r) => (r.json as PushBody).pushToken === token);

  async function webhookTenant(pushToken: string) {
    const t = await pushTenant(world, { pushToken, pushType: 4, pushEnabled: true });
    const saved = await world.api.put<{ signingSecret: string }>(`/adminApi/accounts/${t.account.id}/push-settings/webhook`, {
      token: world.token,
      json: { url: `${hook.url}/push` },
    });
    expect(saved.status, saved.text).to.equal(200);
    return { ...t, secret: saved.body.data.signingSecret };
  }

  async function oauthTenant(pushToken: string) {
    const t = await pushTenant(world, { pushToken, pushType: 5, pushEnabled: true, type: 2 });
    const saved = await world.api.put<{ signingSecret: string }>(`/adminApi/accounts/${t.account.id}/push-settings/oauth-webhook`, {
      token: world.token,
      json: {
        url: `${hook.url}/oauth-push`,
        tokenUrl: `${oauth.url}/oauth/token`,
        clientId: 'palaver-client',
        clientSecret: 's3cr3t:with/odd chars',
        scope: 'push',
      },
    });
    expect(saved.status, saved.text).to.equal(200);
    return { ...t, secret: saved.body.data.signingSecret };
  }

  it('posts one signed request per agent message to the push webhook, with the token and the data map', async () => {
    const t = await webhookTenant('hook-token-1');
    const id = await t.agentSays('Hello over the webhook');
    await t.typing(true);
    await t.typing(false);
    const rows = await pushesSettled(world.server, t.account.id);
    expect(rows.map((r) => [r.kind, r.state])).to.deep.equal([
      ['push_message', 'delivered'],
      ['push_event', 'delivered'],
      ['push_event', 'delivered'],
    ]);
    const requests = forToken('hook-token-1');
    expect(requests).to.have.length(3);
    const [message] = requests;
    expect(message?.path).to.equal('/push');
    expect(message?.headers.authorization).to.equal(undefined);
    // Signed as Service webhooks are: the customer verifies with the secret shown once.
    const body = verify(t.secret, message!) as PushBody;
    expect(body).to.include({ pushToken: 'hook-token-1', pushType: 4, deviceType: 1, userId: t.userId });
    const data = parleyData(body.data);
    expect(data.message).to.equal('Hello over the webhook');
    expect(data.parley).to.deep.include({ type: 'message' });
    expect(data.parley.object).to.include({ id, typeId: 2 });
    expect(requests.slice(1).map((r) => parleyData((r.json as PushBody).data).parley)).to.deep.equal([
      { type: 'event', object: { name: 'startTyping' } },
      { type: 'event', object: { name: 'stopTyping' } },
    ]);
  });

  it('keeps per-device order through retries and removes the token on a 410', async () => {
    const t = await webhookTenant('hook-token-2');
    let refused = false;
    hook.respondWith((request) => {
      const data = parleyData((request.json as PushBody).data);
      if (data.message === 'first' && !refused) {
        refused = true;
        return { status: 500 };
      }
      return data.message === 'gone' ? { status: 410 } : undefined;
    });
    await t.agentSays('first');
    await t.agentSays('second');
    await t.agentSays('gone');
    const rows = await pushesSettled(world.server, t.account.id);
    expect(rows.map((r) => [r.state, r.attempts])).to.deep.equal([
      ['delivered', 2],
      ['delivered', 1],
      ['dead', 1],
    ]);
    expect(forToken('hook-token-2').map((r) => parleyData((r.json as PushBody).data).message)).to.deep.equal([
      'first',
      'first',
      'second',
      'gone',
    ]);
    const device = await world.server.deps.db.orm.em.fork().findOneOrFail(DeviceSchema, { userId: t.userId });
    expect(device.pushToken).to.equal(null);
  });

  it('gets a client-credentials token once, sends it as a bearer, and renews it after a 401', async () => {
    const t = await oauthTenant('oauth-token-1');
    let rejectOnce = true;
    hook.respondWith((request) => {
      if (parleyData((request.json as PushBody).data).message === 'third' && rejectOnce) {
        rejectOnce = false;
        return { status: 401 };
      }
      return undefined;
    });
    await t.agentSays('first');
    await t.agentSays('second');
    await pushesSettled(world.server, t.account.id);
    expect(oauth.requests, 'the token is cached until it expires').to.have.length(1);
    const [grant] = oauth.requests;
    expect(grant?.path).to.equal('/oauth/token');
    expect(Object.fromEntries(new URLSearchParams(grant?.body))).to.deep.equal({ grant_type: 'client_credentials', scope: 'push' });

    await t.agentSays('third');
    const rows = await pushesSettled(world.server, t.account.id);
    expect(rows.map((r) => [r.state, r.attempts])).to.deep.equal([
      ['delivered', 1],
      ['delivered', 1],
      ['delivered', 2],
    ]);
    expect(oauth.requests, 'a refused token is asked for again').to.have.length(2);
    const requests = forToken('oauth-token-1');
    expect(requests.map((r) => r.headers.authorization)).to.deep.equal(Array(4).fill('Bearer customer-token'));
    expect(requests.every((r) => r.path === '/oauth-push')).to.equal(true);
    const body = verify(t.secret, requests[0]!) as PushBody;
    expect(body).to.include({ pushToken: 'oauth-token-1', pushType: 5, deviceType: 2 });
  });

  it('retries while the token endpoint refuses, and sends nothing without a token', async () => {
    const t = await pushTenant(world, { pushToken: 'oauth-token-2', pushType: 5, pushEnabled: true });
    const saved = await world.api.put(`/adminApi/accounts/${t.account.id}/push-settings/oauth-webhook`, {
      token: world.token,
      json: { url: `${hook.url}/oauth-push`, tokenUrl: `${oauth.url}/oauth/token`, clientId: 'palaver-client', clientSecret: 'wrong' },
    });
    expect(saved.status, saved.text).to.equal(200);
    await t.agentSays('never sent');
    const rows = await pushesSettled(world.server, t.account.id);
    // The test schedule: three attempts, then dead.
    expect(rows.map((r) => [r.state, r.attempts])).to.deep.equal([['dead', 3]]);
    expect(rows[0]?.last_error).to.match(/HTTP 401/);
    expect(forToken('oauth-token-2')).to.have.length(0);
  });

  it('pushes to every device of a registered user, each with its own token and type', async () => {
    const t = await webhookTenant('phone-token');
    const phone = new Widget(t.account, undefined, undefined, '', world.server.url).signIn('customer-two-devices');
    const tablet = new Widget(t.account, undefined, undefined, '', world.server.url).signIn('customer-two-devices');
    const first = await phone.register({ type: 1, pushToken: 'phone-token-2', pushType: 4, pushEnabled: true });
    const second = await tablet.register({ type: 2, pushToken: 'tablet-token-2', pushType: 4, pushEnabled: true });
    expect(first.status, first.text).to.equal(200);
    expect(second.body.data.userId).to.equal(first.body.data.userId);
    const sent = await world.api.post(`/users/${first.body.data.userId}/messages`, {
      token: t.service.apiKey,
      json: { message: 'to both devices', agent: { id: 7, name: 'Ada' } },
    });
    expect(sent.status, sent.text).to.equal(201);
    await pushesSettled(world.server, t.account.id);
    const received = hook.requests.filter((r) => parleyData((r.json as PushBody).data).message === 'to both devices');
    expect(received.map((r) => [(r.json as PushBody).pushToken, (r.json as PushBody).deviceType]).sort()).to.deep.equal([
      ['phone-token-2', 1],
      ['tablet-token-2', 2],
    ]);
  });

  it('writes nothing for a device whose type has no settings', async () => {
    const t = await pushTenant(world, { pushToken: 'no-settings', pushType: 4, pushEnabled: true });
    await t.agentSays('nobody to push it');
    expect(await pushRows(world.server, t.account.id)).to.deep.equal([]);
  });
});
