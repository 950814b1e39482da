// The Service API through HTTP with loopback receivers: keys, account isolation, changeOwner,
// agent messages and the current agent (2.3.0 unset), user reads, merged ids.
import { expect } from 'chai';
import { adminToken, createAccount, createService, type AccountData, type CreatedServiceData } from './support/factories.ts';
import { client, type RequestOptions } from './support/http.ts';
import { expectNothingEnqueued, expectOutbox, receivedExactly } from './support/outbox.ts';
import { Receiver } from './support/receiver.ts';
import { TEST_ADMIN, sharedServer, startTestServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

const AVATAR_RULE = 'an avatar is an absolute https URL (http too where private webhook addresses are allowed)';

function asService(service: CreatedServiceData, prefix = '') {
  const api = client(sharedServer().url);
  const withKey = (options: RequestOptions = {}): RequestOptions => ({ ...options, token: service.apiKey });
  return {
    get: <T = unknown>(path: string) => api.get<T>(prefix + path, withKey()),
    put: <T = unknown>(path: string, json?: unknown) => api.put<T>(prefix + path, withKey(json === undefined ? {} : { json })),
    post: <T = unknown>(path: string, json?: unknown) => api.post<T>(prefix + path, withKey({ json })),
  };
}

describe('Service API', function () {
  this.timeout(30_000);
  let t: Tenant;
  let desk: CreatedServiceData;
  let deskReceiver: Receiver;
  let widget: Widget;
  let userId: number;

  beforeEach(async () => {
    t = await tenant();
    deskReceiver = await Receiver.start();
    desk = await createService(t.account.id, { name: 'Agent desk', webhookUrl: `${deskReceiver.url}/hook` });
    widget = new Widget(t.account);
    userId = (await widget.register()).body.data.userId;
  });
  afterEach(async () => {
    await t.receiver.close();
    await deskReceiver.close();
  });

  it('refuses a missing or unknown API key with 401', async () => {
    const api = client(sharedServer().url);
    const missing = await api.get(`/users/${userId}`);
    expect(missing.status).to.equal(401);
    expect(missing.body.notifications[0]?.message).to.equal('missing_api_key');
    const unknown = await api.get(`/users/${userId}`, { token: 'pk_not_a_key' });
    expect(unknown.status).to.equal(401);
    expect(unknown.body.notifications[0]?.message).to.equal('invalid_api_key');
  });

  // A key the node holds answers without reading it again (api/service/caller.ts): switched off
  // by an operator, its Service is refused whether its key was held or read afresh.
  it('refuses the key of a Service an operator switched off with 403, held or read, and takes it once on again', async () => {
    const api = client(sharedServer().url);
    const token = await adminToken();
    const asDesk = asService(desk);
    expect((await asDesk.get(`/users/${userId}`)).status).to.equal(200);
    const off = await api.patch(`/adminApi/services/${desk.id}`, { token, json: { enabled: false } });
    expect(off.status, off.text).to.equal(200);
    for (let i = 0; i < 2; i++) {
      const refused = await asDesk.get(`/users/${userId}`);
      expect(refused.status).to.equal(403);
      expect(refused.body.notifications[0]?.message).to.equal('service_disabled');
    }
    const on = await api.patch(`/adminApi/services/${desk.id}`, { token, json: { enabled: true } });
    expect(on.status, on.text).to.equal(200);
    expect((await asDesk.get(`/users/${userId}`)).status).to.equal(200);
  });

  it('answers another account’s user as not found on every route', async () => {
    const other = await createAccount();
    const stranger = asService(await createService(other.id, { name: 'Elsewhere' }));
    const attempts = [
      stranger.get(`/users/${userId}`),
      stranger.get(`/users/${userId}/messages`),
      stranger.put(`/users/${userId}/owner`, { serviceIdentification: desk.identification }),
      stranger.post(`/users/${userId}/messages`, { message: 'hi', agent: { id: 1, name: 'X' } }),
      stranger.put(`/users/${userId}/agent/unset`),
      stranger.post(`/users/${userId}/typing`, { isTyping: true, agent: { id: 1, name: 'X' } }),
    ];
    for (const answer of await Promise.all(attempts)) {
      expect(answer.status).to.equal(404);
      expect(answer.body.notifications[0]?.message).to.equal('user_not_found');
    }
    const unknown = await asService(t.service).get('/users/2147483000');
    expect(unknown.status).to.equal(404);
    const unknownWrite = await asService(t.service).post('/users/2147483000/messages', { message: 'hi', agent: { id: 1, name: 'X' } });
    expect(unknownWrite.status).to.equal(404);
    expect(unknownWrite.body.notifications[0]?.message).to.equal('user_not_found');
  });

  it('changeOwner: nothing is delivered when the owner stays the same', async () => {
    const answer = await asService(t.service).put<{ changed: boolean }>(`/users/${userId}/owner`, {
      serviceIdentification: t.service.identification,
    });
    expect(answer.status).to.equal(200);
    expect(answer.body.data.changed).to.equal(false);
    // Read right after the answer: the outbox is written in the change's transaction.
    await expectNothingEnqueued([t.service.id, desk.id]);
  });

  it('changeOwner: delivers the exact action to the old and the new owner, and later messages go to the new one', async () => {
    const answer = await asService(t.service).put<{ changed: boolean; owner: { identification: string } }>(`/users/${userId}/owner`, {
      serviceIdentification: desk.identification,
    });
    expect(answer.status).to.equal(200);
    expect(answer.body.data).to.deep.include({ changed: true });
    expect(answer.body.data.owner.identification).to.equal(desk.identification);
    await expectOutbox({ serviceId: t.service.id, userId }, 1, 'the action to the old owner');
    await expectOutbox({ serviceId: desk.id, userId }, 1, 'the action to the new owner');

    const expected = {
      type: 'owner',
      accountIdentification: t.account.identification,
      user: { id: userId, uniqueIdentifier: null, additionalInformation: null },
      body: {
        action: 'changeOwner',
        metadata: '',
        oldOwner: { name: 'Owner', identification: t.service.identification, default: true },
        newOwner: { name: 'Agent desk', identification: desk.identification, default: false },
        initiatedBy: { name: 'Owner', identification: t.service.identification, default: true },
      },
    };
    const [toOld] = await receivedExactly(t.receiver, t.service.id, 1);
    const [toNew] = await receivedExactly(deskReceiver, desk.id, 1);
    expect(toOld?.json).to.deep.equal(expected);
    expect(toNew?.json).to.deep.equal(expected);
    expect((toOld?.json as { user: { id: unknown } }).user.id).to.be.a('number');

    await widget.send('for the desk now');
    await expectOutbox({ serviceId: t.service.id }, 1, 'the old owner hears nothing more: deliveries');
    const [, message] = await receivedExactly(deskReceiver, desk.id, 2);
    expect((message?.json as { message: string }).message).to.equal('for the desk now');

    const unknownService = await asService(t.service).put(`/users/${userId}/owner`, { serviceIdentification: 'nope' });
    expect(unknownService.status).to.equal(404);
    expect(unknownService.body.notifications[0]?.message).to.equal('service_not_found');
    await expectOutbox({ serviceId: t.service.id }, 1, 'a refused change announces nothing: deliveries');
    await expectOutbox({ serviceId: desk.id }, 2, 'a refused change announces nothing: deliveries');
  });

  it('an agent message makes its agent current; unset clears it while messages keep their agent', async () => {
    const service = asService(t.service);
    const sent = await service.post<{ id: number; agent: unknown; typeId: number }>(`/users/${userId}/messages`, {
      message: 'Hi, I am Ada',
      agent: { id: 7, name: 'Ada', avatar: 'https://cdn.example/ada.png' },
    });
    expect(sent.status).to.equal(201);
    expect(sent.body.data).to.deep.include({
      typeId: 2,
      agent: { id: 7, name: 'Ada', avatar: 'https://cdn.example/ada.png', isTyping: null },
    });
    await expectNothingEnqueued([t.service.id, desk.id], 'an agent message is not echoed to a Service: deliveries');

    let list = await widget.messages();
    const root = list.body as unknown as { agent: unknown };
    expect(root.agent).to.deep.equal({ id: 7, name: 'Ada', avatar: 'https://cdn.example/ada.png', isTyping: null });
    expect(list.body.data[0]?.message).to.equal('Hi, I am Ada');

    const unset = await service.put(`/users/${userId}/agent/unset`);
    expect(unset.status).to.equal(200);
    list = await widget.messages();
    expect((list.body as unknown as { agent: unknown }).agent).to.equal(null);
    expect(list.body.data[0]?.agent).to.deep.include({ id: 7, name: 'Ada' });

    const unseen = await widget.call<{ count: number }>('GET', '/messages/unseen/count');
    expect(unseen.body.data.count).to.equal(1);
    await expectNothingEnqueued([t.service.id, desk.id], 'unsetting the agent is not announced: deliveries');
  });

  it('refuses bad agent messages', async () => {
    const service = asService(t.service);
    for (const body of [
      { message: 'x' },
      { message: '', agent: { id: 1, name: 'A' } },
      { message: 'x', agent: { id: 1, name: 'A' }, typeId: 1 },
      { message: 'x', agent: { id: 'one', name: 'A' } },
      { message: 'x', agent: { id: 1, name: 'A', avatar: 'not a url' } },
    ]) {
      const answer = await service.post(`/users/${userId}/messages`, body);
      expect(answer.status, JSON.stringify(body)).to.equal(422);
    }
  });

  it('refuses agent avatars that are not absolute http(s) URLs, in messages and typing, naming the field', async () => {
    const service = asService(t.service);
    const refused = [
      'javascript:alert(document.domain)',
      'JavaScript:alert(1)',
      'data:image/svg+xml;base64,PHN2Zy8+',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      '//cdn.example/ada.png',
      '/ada.png',
      'https:cdn.example/ada.png',
    ];
    for (const avatar of refused) {
      const agent = { id: 7, name: 'Ada', avatar };
      for (const [route, body] of [
        ['messages', { message: 'x', agent }],
        ['typing', { isTyping: true, agent }],
      ] as const) {
        const answer = await service.post(`/users/${userId}/${route}`, body);
        expect(answer.status, `${route} ${avatar}`).to.equal(422);
        expect(answer.body.notifications, `${route} ${avatar}`).to.deep.include.members([
          { type: 'error', message: 'validation_failed', field: 'body.agent.avatar', detail: AVATAR_RULE },
        ]);
      }
    }
    // Private webhook addresses are allowed in the tests: plain http is accepted, as https always is.
    for (const avatar of ['https://cdn.example/ada.png', 'http://localhost:8080/ada.png']) {
      const answer = await service.post(`/users/${userId}/messages`, { message: 'x', agent: { id: 7, name: 'Ada', avatar } });
      expect(answer.status, avatar).to.equal(201);
    }
  });

  it('accepts only https avatars where private webhook addresses are not allowed (the production default)', async () => {
    const server = await startTestServer({ webhooks: { allowPrivate: false } });
    try {
      const api = client(server.url);
      const login = await api.post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN });
      const token = login.body.data.token;
      const account = await api.post<AccountData>('/adminApi/accounts', { token, json: { name: 'Avatars' } });
      const made = await api.post<CreatedServiceData>(`/adminApi/accounts/${account.body.data.id}/services`, {
        token,
        json: { name: 'Desk' },
      });
      const visitor = new Widget(account.body.data, undefined, undefined, '', server.url);
      const user = (await visitor.register()).body.data.userId;
      const send = (avatar: string) =>
        api.post(`/users/${user}/messages`, {
          token: made.body.data.apiKey,
          json: { message: 'x', agent: { id: 7, name: 'Ada', avatar } },
        });
      const plain = await send('http://cdn.example/ada.png');
      expect(plain.status).to.equal(422);
      expect(plain.body.notifications).to.deep.equal([
        { type: 'error', message: 'validation_failed', field: 'body.agent.avatar', detail: 'an avatar is an https URL' },
      ]);
      expect((await send('https://cdn.example/ada.png')).status).to.equal(201);
    } finally {
      await server.stop();
    }
  });

  it('reads the user and the whole conversation, system messages included, paged', async () => {
    widget.signIn('customer-svc');
    const registeredId = (await widget.register({ userAdditionalInformation: { tier: 2 } })).body.data.userId;
    await widget.send('one');
    await widget.send('two');
    const service = asService(t.service, '/serviceApi/v2.3');
    const user = await service.get<Record<string, unknown>>(`/users/${registeredId}`);
    expect(user.status).to.equal(200);
    expect(user.body.data).to.deep.include({
      id: registeredId,
      kind: 'registered',
      uniqueIdentifier: 'customer-svc',
      additionalInformation: { tier: 2 },
      owner: { name: 'Owner', identification: t.service.identification, default: true },
      agent: null,
    });
    const page = await service.get<Array<{ message: string; typeId: number }>>(`/users/${registeredId}/messages?limit=2`);
    expect(page.body.data.map((m) => m.message)).to.deep.equal(['two', 'one']);
    const before = (page.body as unknown as { paging: { before: number } }).paging.before;
    const rest = await service.get<Array<{ message: string; typeId: number }>>(`/users/${registeredId}/messages?before=${before}`);
    expect(rest.body.data.map((m) => [m.message, m.typeId])).to.deep.equal([['user_registered', 4]]);
  });

  it('answers a merged anonymous id with user_merged and the new id', async () => {
    widget.signIn('customer-merged');
    const registeredId = (await widget.register()).body.data.userId;
    const answer = await asService(t.service).get(`/users/${userId}`);
    expect(answer.status).to.equal(409);
    expect(answer.body.notifications[0]?.message).to.equal('user_merged');
    expect(answer.body.data).to.deep.equal({ userId: registeredId });
    const write = await asService(t.service).post(`/users/${userId}/messages`, { message: 'x', agent: { id: 1, name: 'A' } });
    expect(write.status).to.equal(409);
    expect(write.body.notifications[0]?.message).to.equal('user_merged');
    expect(write.body.data).to.deep.equal({ userId: registeredId });
  });

  it('shows an agent typing on the root agent until it stops by itself', async () => {
    const service = asService(t.service);
    const ada = { id: 7, name: 'Ada' };
    await service.post(`/users/${userId}/messages`, { message: 'Let me check', agent: ada });
    const started = Date.now();
    const typing = await service.post<{ isTyping: boolean }>(`/users/${userId}/typing`, { isTyping: true, agent: ada });
    expect(typing.status).to.equal(200);
    const root = async () => ((await widget.messages()).body as unknown as { agent: { isTyping: number | null } }).agent;
    // A number (the Unix time in seconds until which the agent types), as the Android library reads
    // it; null only where the server's typing timeout (300 ms in the test configuration) has
    // passed since before the request, as it may on a loaded machine.
    const shown = (await root()).isTyping;
    if (shown === null) expect(Date.now() - started).to.be.at.least(sharedServer().config.client.typingTimeoutMs);
    else
      expect(shown)
        .to.be.a('number')
        .above(started / 1000);
    // Typing stops by itself: waited for (the test's budget ends the wait).
    while ((await root()).isTyping !== null) await new Promise((r) => setTimeout(r, 50));

    await service.post(`/users/${userId}/typing`, { isTyping: true, agent: ada });
    await service.post(`/users/${userId}/typing`, { isTyping: false, agent: ada });
    expect((await root()).isTyping).to.equal(null);
    expect((await service.post(`/users/${userId}/typing`, { isTyping: 'yes', agent: ada })).status).to.equal(422);
  });

  it('sends an image as an agent message: upload to the conversation, then refer to it', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const form = new FormData();
    form.append('media', new Blob([png], { type: 'image/png' }), 'chart.png');
    const uploaded = await fetch(`${sharedServer().url}/users/${userId}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.service.apiKey}` },
      body: form,
    });
    expect(uploaded.status).to.equal(201);
    const mediaId = ((await uploaded.json()) as { data: { media: string } }).data.media;

    const sent = await asService(t.service).post<{ image: string; message: null }>(`/users/${userId}/messages`, {
      media: { id: mediaId, description: 'your chart' },
      agent: { id: 7, name: 'Ada' },
    });
    expect(sent.status).to.equal(201);
    expect(sent.body.data.message).to.equal(null);
    const shown = (await widget.messages()).body.data[0];
    expect(shown?.media).to.include({ mimeType: 'image/png', description: 'your chart' });
    const { year, month, day, filename } = shown?.media as Record<string, string>;
    const file = await fetch(`${sharedServer().url}/media/${year}/${month}/${day}/${filename}`, { headers: widget.headers() });
    expect(file.status, 'the user can fetch the agent’s image').to.equal(200);

    const other = new Widget(t.account);
    const otherId = (await other.register()).body.data.userId;
    const elsewhere = await asService(t.service).post(`/users/${otherId}/messages`, {
      media: { id: mediaId },
      agent: { id: 7, name: 'Ada' },
    });
    expect(elsewhere.status, 'an upload belongs to one conversation').to.equal(404);
  });
});
