// Issue 19: the Parley Android library (3.13.0) against Palaver, request for request as it
// sends them: its base URL `<url>clientApi/v1.9/` with paths appended to it (so paging.before
// arrives after a doubled slash), Gson bodies sent as `text/plain; charset=UTF-8` with the
// model's internal keys (uuid, time, send_status, media.filename and mimeType), Authorization
// only once signed in, a lowercase uuid device, OkHttp multipart parts typed by extension and
// named yyyyMMdd_HHmmss. One conversation from first registration to reset; every answer is
// held to the one schema of what the three libraries decode (test/support/parley-shapes.ts).
import { expect } from 'chai';
import { issueAuthorization } from '../src/api/client/authorization.ts';
import { DeviceSchema } from '../src/db/entities/index.ts';
import { adminToken } from './support/factories.ts';
import { PDF, PNG } from './support/files.ts';
import { outboxRows } from './support/outbox.ts';
import {
  ADA,
  BEA,
  ANDROID,
  AndroidLibrary,
  CAROUSEL_ANSWER,
  JPEG,
  RICH_ANSWER,
  ServiceDesk,
  TeamDesk,
  androidFileName,
  body,
  dataOf,
  expectAnswer,
  expectError,
  page,
  type ParleyMessage,
  type WireAnswer,
} from './support/parley-clients.ts';
import { sharedServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';

const em = () => sharedServer().deps.db.orm.em.fork();

describe('Parley Android library 3.13.0: one conversation, request for request (issue 19)', function () {
  this.timeout(30_000);
  let t: Tenant;
  let app: AndroidLibrary;
  let desk: ServiceDesk;
  let userId: number;
  const sent: number[] = [];
  const agentSaid: number[] = [];
  const uploads: Array<{ name: string; mimeType: string; bytes: Buffer; messageId?: number }> = [];

  before(async () => {
    t = await tenant();
    // ParleyNetwork: the url ends in a slash, the path too; paths are concatenated to them.
    app = new AndroidLibrary({ url: `${sharedServer().url}/`, secret: t.account.identification });
    desk = new ServiceDesk(sharedServer().url, t.service.apiKey);
  });
  after(() => t.receiver.close());

  async function typingThenRead(read: () => Promise<WireAnswer>): Promise<WireAnswer> {
    for (let attempt = 1; ; attempt++) {
      await desk.typing(userId, true);
      const answer = expectAnswer('messagesPage', await read());
      if (page(answer).agent?.isTyping !== null || attempt === 3) return answer;
    }
  }

  it('configures: POST devices with the Device model as text/plain, no Authorization, a lowercase uuid device', async () => {
    expect(app.uniqueDeviceIdentifier).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(app.deviceBody(), 'Gson escapes = and & in the referrer').to.include('\\u003d').and.include('\\u0026');
    const answer = expectAnswer('deviceRegistered', await app.register());
    userId = dataOf<{ userId: number }>(answer).userId;
    const device = await em().findOneOrFail(DeviceSchema, { accountId: t.account.id, uniqueAppDeviceId: app.uniqueDeviceIdentifier });
    expect(device).to.include({
      userId,
      type: ANDROID.deviceType,
      version: ANDROID.version,
      pushToken: app.pushToken,
      pushType: ANDROID.pushType,
      referer: app.referrer,
    });
    // loadInitial: GET messages right after.
    const first = expectAnswer('messagesPage', await app.findAll());
    expect(page(first).data).to.deep.equal([]);
    expect(page(first).paging).to.deep.equal({ before: '', after: '' });
  });

  it('sends a text with the whole Message model: uuid, time, typeId 1, send_status', async () => {
    const answer = expectAnswer('messageSent', await app.send(AndroidLibrary.text('Hi, where is my order?')));
    const messageId = dataOf<{ messageId: string | number }>(answer).messageId;
    expect(String(messageId), 'read as an Int by Gson').to.match(/^\d+$/);
    sent.push(Number(messageId));
  });

  it('uploads a camera photo, a PDF and a file of another type (OkHttp parts, yyyyMMdd_HHmmss names), then sends each as {media: {id, filename, mimeType}}', async () => {
    const now = new Date();
    for (const [bytes, extension, partType] of [
      [JPEG, 'jpg', 'image/jpeg'],
      [PDF, 'pdf', 'application/pdf'],
      // MimeType.Other: the literal `*/*` as the part type, and in the message.
      [PNG, 'png', '*/*'],
    ] as const) {
      const name = androidFileName(now, extension);
      const uploaded = expectAnswer('mediaUploaded', await app.sendMedia(name, partType, bytes), name);
      const mediaId = dataOf<{ media: string }>(uploaded).media;
      const answer = expectAnswer('messageSent', await app.send(AndroidLibrary.media(mediaId, name, partType)), name);
      const messageId = Number(dataOf<{ messageId: string | number }>(answer).messageId);
      sent.push(messageId);
      uploads.push({ name, mimeType: partType, bytes, messageId });
    }
    const list = page(expectAnswer('messagesPage', await app.findAll())).data;
    const byId = new Map(list.map((m) => [m.id, m]));
    expect(byId.get(uploads[0]!.messageId!)?.media).to.include({ mimeType: 'image/jpeg', description: uploads[0]!.name });
    expect(byId.get(uploads[1]!.messageId!)?.media).to.include({ mimeType: 'application/pdf', description: uploads[1]!.name });
    expect(byId.get(uploads[2]!.messageId!)?.media, 'the type comes from the bytes').to.include({ mimeType: 'image/png' });
  });

  it('fetches each file as media/ + its id without the first two segments', async () => {
    const list = page(expectAnswer('messagesPage', await app.findAll())).data;
    for (const upload of uploads) {
      const message = list.find((m) => m.id === upload.messageId)!;
      const answer = await app.media(message.media!.id);
      expect(answer.status, `${upload.name}: ${answer.text.slice(0, 200)}`).to.equal(200);
      expect(answer.bytes.equals(upload.bytes), upload.name).to.equal(true);
    }
  });

  it('hears the agent by push: GET messages/{id} of a rich answer and of a carousel', async () => {
    for (const answerBody of [RICH_ANSWER, CAROUSEL_ANSWER]) {
      const id = await desk.say(userId, answerBody);
      agentSaid.push(id);
      const answer = expectAnswer('oneMessage', await app.get(id));
      const message = dataOf<ParleyMessage>(answer);
      expect(message).to.deep.include({ id, typeId: 2 });
      expect(message.agent).to.deep.include({ id: ADA.id, name: ADA.name });
    }
    const rich = dataOf<ParleyMessage>(expectAnswer('oneMessage', await app.get(agentSaid[0]!)));
    expect(rich.buttons).to.deep.equal(RICH_ANSWER.buttons);
    expect(rich.quickReplies).to.deep.equal(RICH_ANSWER.quickReplies);
    expect(rich.title).to.equal(RICH_ANSWER.title);
    const carousel = dataOf<ParleyMessage>(expectAnswer('oneMessage', await app.get(agentSaid[1]!)));
    expect(carousel.carousel.map((c) => [c.title, c.buttons[0]?.type])).to.deep.equal([
      ['Blue chair', 'webUrl'],
      ['Red chair', 'reply'],
    ]);
  });

  it('reads the typing agent on reconnect (GET messages): isTyping a number its long takes', async () => {
    const answer = await typingThenRead(() => app.findAll());
    expect(page(answer).agent).to.deep.include({ id: ADA.id, name: ADA.name });
    expect(page(answer).agent?.isTyping).to.be.a('number');
  });

  it('hears an operator of the team inbox by push like a bot: GET messages/{id} of an answer and of a file, the operator as the agent', async () => {
    const team = await TeamDesk.signIn(sharedServer().url, await adminToken(), t.account.id);
    const text = await team.say(userId, { message: 'Bea here, I am looking into it.' });
    const media = await team.upload(userId, PDF, 'label.pdf', 'application/pdf');
    const file = await team.say(userId, { media: { id: media, description: 'Your return label' } });
    agentSaid.push(text, file);
    const bea = { id: team.operatorId, name: BEA.name, avatar: BEA.avatar };
    const said = dataOf<ParleyMessage>(expectAnswer('oneMessage', await app.get(text)));
    expect(said).to.deep.include({ id: text, typeId: 2, message: 'Bea here, I am looking into it.' });
    expect(said.agent).to.deep.include(bea);
    const message = dataOf<ParleyMessage>(expectAnswer('oneMessage', await app.get(file)));
    expect(message).to.deep.include({ id: file, typeId: 2 });
    expect(message.agent).to.deep.include(bea);
    expect(message.media).to.include({ mimeType: 'application/pdf', description: 'Your return label' });
    const fetched = await app.media(message.media!.id);
    expect(fetched.status, fetched.text).to.equal(200);
    expect(fetched.bytes.equals(PDF)).to.equal(true);
    const latest = page(expectAnswer('messagesPage', await app.findAll()));
    expect(latest.agent, 'the operator is the current agent').to.deep.include({ id: team.operatorId, name: BEA.name });
  });

  it('loads older messages at base URL + paging.before, verbatim: …/clientApi/v1.9//messages/before:N', async () => {
    for (let i = 1; i <= 50; i++) {
      const answer = expectAnswer('messageSent', await app.send(AndroidLibrary.text(`Line ${i}`)), `line ${i}`);
      sent.push(Number(dataOf<{ messageId: string }>(answer).messageId));
    }
    const first = expectAnswer('messagesPage', await app.findAll());
    expect(page(first).data).to.have.length(50);
    const before = page(first).paging.before;
    expect(before, 'not blank: canLoadMore').to.match(/^\/messages\/before:\d+$/);

    const older = expectAnswer('messagesPage', await app.getOlder(before));
    expect(older.request.url).to.include('/clientApi/v1.9//messages/before:');
    const all = [...page(first).data, ...page(older).data].map((m) => m.id);
    expect(new Set(all).size, 'no message twice').to.equal(all.length);
    expect(all.sort((a, b) => a - b)).to.deep.equal([...sent, ...agentSaid].sort((a, b) => a - b));
    expect(page(older).paging.before, 'the start of the conversation').to.equal('');
  });

  it('counts unseen messages and marks the agent’s seen with PUT messages/status/4 (1.9)', async () => {
    const unseen = expectAnswer('unseenCount', await app.getUnseen());
    expect(dataOf<{ count: number }>(unseen).count).to.equal(agentSaid.length);
    // MessageStatusWorker: messages of typeId 2, 3 or 5 whose status is not 4.
    const latest = expectAnswer('messagesPage', await app.findAll());
    const older = expectAnswer('messagesPage', await app.getOlder(page(latest).paging.before));
    const list = [...page(latest).data, ...page(older).data];
    const agents = list.filter((m) => [2, 3, 5].includes(m.typeId) && m.status !== 4).map((m) => m.id);
    expect(agents.sort((a, b) => a - b)).to.deep.equal(agentSaid);
    expectAnswer('statusChanged', await app.updateStatusRead(agents));
    expect(dataOf<{ count: number }>(expectAnswer('unseenCount', await app.getUnseen())).count).to.equal(0);
  });

  it('sends a silent message: typeId 4 with the app’s own text reaches the Service with typeId 4 and is never listed', async () => {
    const text = 'User opened order 1001 in the app';
    const answer = expectAnswer('messageSent', await app.send(AndroidLibrary.text(text, true)));
    const messageId = Number(dataOf<{ messageId: string }>(answer).messageId);
    const delivery = (await outboxRows({ serviceId: t.service.id, userId })).find((r) => (r.payload as { id?: number }).id === messageId);
    expect(delivery?.payload).to.deep.include({ type: 'message', message: text, typeId: 4 });
    const deadline = Date.now() + 10_000;
    while (!t.receiver.requests.some((r) => (r.json as { id?: number } | undefined)?.id === messageId) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const received = t.receiver.requests.find((r) => (r.json as { id?: number } | undefined)?.id === messageId);
    expect(received?.json, 'delivered to the Service').to.deep.include({ message: text, typeId: 4 });
    const list = page(expectAnswer('messagesPage', await app.findAll())).data;
    expect(list.map((m) => m.id)).to.not.include(messageId);
    const one = await app.get(messageId);
    expectError(one, 404, 'message_not_found', 'a silent message read by its id');
  });

  it('answers under every API version it offers, 1.2–1.5 as aliases, each with its own base URL', async () => {
    for (const version of ANDROID.versions) {
      const versioned = new AndroidLibrary({
        url: `${sharedServer().url}/`,
        secret: t.account.identification,
        path: `clientApi/v${version}/`,
      });
      versioned.uniqueDeviceIdentifier = app.uniqueDeviceIdentifier;
      expectAnswer('deviceRegistered', await versioned.register(), `v${version}`);
      expectAnswer('messageSent', await versioned.send(AndroidLibrary.text(`Sent through v${version}`)), `v${version}`);
      const list = expectAnswer('messagesPage', await versioned.findAll(), `v${version}`);
      expect(page(list).data[0]?.message, `v${version}`).to.equal(`Sent through v${version}`);
      expect(page(list).paging.before, `v${version}: relative to its base`).to.match(/^\/messages\/before:\d+$/);
      expectAnswer('messagesPage', await versioned.getOlder(page(list).paging.before), `v${version} older`);
    }
  });

  it('1.5 and older: its image through POST messages (field `image`) is refused as an error it can read', async () => {
    const legacy = new AndroidLibrary({ url: `${sharedServer().url}/`, secret: t.account.identification, path: 'clientApi/v1.5/' });
    legacy.uniqueDeviceIdentifier = app.uniqueDeviceIdentifier;
    const answer = await legacy.sendLegacyImage(androidFileName(new Date(), 'jpg'), 'image/jpeg', JPEG);
    // Not served (the 1.6+ POST media is): the message shows as failed, Android reading the
    // non-2xx status and the first code.
    expectError(answer, 415, 'unsupported_media_type', 'legacy image upload');
  });

  let token: string;
  let registeredUserId: number;

  it('setUserInformation(token): reconfigures with Authorization and the user’s information, and the conversation continues', async () => {
    token = issueAuthorization(t.account, 'customer-android-19', Math.floor(Date.now() / 1000) + 7 * 24 * 3600);
    app.userAuthorization = token;
    app.userAdditionalInformation = { name: 'Dana', email: 'dana@example.com' };
    const answer = expectAnswer('deviceRegistered', await app.register(), 'login');
    registeredUserId = dataOf<{ userId: number }>(answer).userId;
    expect(registeredUserId).to.not.equal(userId);
    const list = expectAnswer('messagesPage', await app.findAll(), 'after login');
    expect(page(list).data[0]?.message).to.equal('Sent through v1.9');
    expectAnswer('messageSent', await app.send(AndroidLibrary.text('Logged in now')), 'after login');
  });

  it('reset(): the same device, no Authorization, {} as information: 403 device_requires_authorization, the device keeps its customer, and configure fails the same way', async () => {
    const device = () => em().findOneOrFail(DeviceSchema, { accountId: t.account.id, uniqueAppDeviceId: app.uniqueDeviceIdentifier });
    const before = await device();
    // resetI: authorization and information cleared, then POST devices at once with the
    // secret and device id still set, the push token kept.
    app.userAuthorization = null;
    app.userAdditionalInformation = {};
    const reset = expectError(await app.register(), 403, 'device_requires_authorization', 'reset');
    // Android hands (403, "device_requires_authorization") to callback.onFailure; it clears the
    // secret and its messages and is UNCONFIGURED whatever the answer.
    expect(body<{ notifications: Array<{ message: string }> }>(reset).notifications.map((n) => n.message)).to.deep.equal([
      'device_requires_authorization',
      'device_not_registered',
    ]);
    expect(await device(), 'nothing changes on the device').to.deep.equal(before);

    // configure(context, secret) again: the same id from SharedPreferences, so the same refusal,
    // and the state is FAILED ("The chat cannot be displayed at this time").
    expectError(await app.register(), 403, 'device_requires_authorization', 'configure after reset');
    // Whatever it reads with that id and no Authorization is refused as well.
    expectError(await app.findAll(), 401, 'authorization_required', 'GET messages after reset');
    expectError(await app.send(AndroidLibrary.text('Anyone?')), 401, 'authorization_required', 'POST messages after reset');
    expect(await device(), 'still nothing changed').to.deep.equal(before);

    // clearUserInformation() while configured: the same registration, the same refusal.
    expectError(await app.register(), 403, 'device_requires_authorization', 'clearUserInformation');

    // Only an app that passes its own new id to configure(context, secret, uniqueDeviceIdentifier) starts anew.
    const fresh = new AndroidLibrary({ url: `${sharedServer().url}/`, secret: t.account.identification });
    fresh.pushToken = app.pushToken;
    const anonymous = expectAnswer('deviceRegistered', await fresh.register(), 'a new id from the app');
    expect(dataOf<{ userId: number }>(anonymous).userId).to.not.be.oneOf([userId, registeredUserId]);
    expect(page(expectAnswer('messagesPage', await fresh.findAll(), 'a new id from the app')).data).to.deep.equal([]);

    // The customer signed in again on the old id has everything.
    app.userAuthorization = token;
    const history = expectAnswer('messagesPage', await app.findAll(), 'signed in again');
    expect(page(history).data[0]?.message).to.equal('Logged in now');
  });
});
