// Issue 19: the Parley iOS library (4.4.2) against Palaver, request for request as it sends
// them: `<url>/clientApi/v1.9` + each path, `Content-Type: application/json; charset=utf-8` on
// every request (GETs and the body-less event POSTs included), JSONEncoder bodies (`/`
// escaped) with `type: 1`, `time` and `referrer` on messages and `pushEnabled` on the device,
// Authorization only once signed in, an UPPERCASE uuid device, and its hand-built multipart:
// the file named by a bare uppercase UUID with no extension, no CRLF after the closing
// boundary. One conversation from first registration to reset; every answer is held to the one
// schema of what the three libraries decode (test/support/parley-shapes.ts).
import { expect } from 'chai';
import { issueAuthorization } from '../src/api/client/authorization.ts';
import { DeviceSchema } from '../src/db/entities/index.ts';
import { adminToken } from './support/factories.ts';
import { PDF, PNG } from './support/files.ts';
import { outboxRows } from './support/outbox.ts';
import {
  ADA,
  BEA,
  CAROUSEL_ANSWER,
  IOS,
  IosLibrary,
  JPEG,
  RICH_ANSWER,
  ServiceDesk,
  TeamDesk,
  body,
  dataOf,
  expectAnswer,
  expectError,
  iosMultipart,
  page,
  type ParleyMessage,
  type WireAnswer,
} from './support/parley-clients.ts';
import { sharedServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';

const em = () => sharedServer().deps.db.orm.em.fork();

describe('Parley iOS library 4.4.2: one conversation, request for request (issue 19)', function () {
  this.timeout(30_000);
  let t: Tenant;
  let app: IosLibrary;
  let desk: ServiceDesk;
  let userId: number;
  const sent: number[] = [];
  const agentSaid: number[] = [];
  const uploads: Array<{ partType: string; bytes: Buffer; stored: string; messageId: number }> = [];

  before(async () => {
    t = await tenant();
    app = new IosLibrary({ baseUrl: sharedServer().url, secret: t.account.identification });
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

  /** Event payloads the owner Service received, by name, in order. */
  async function eventsReceived(count: number): Promise<string[]> {
    const names = () =>
      t.receiver.requests
        .map((r) => r.json as { type?: string; body?: { name?: string } } | undefined)
        .filter((j) => j?.type === 'event')
        .map((j) => j?.body?.name ?? '');
    const deadline = Date.now() + 10_000;
    while (names().length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return names();
  }

  it('configures: POST devices with pushEnabled and its JSON content type, no Authorization, an UPPERCASE uuid device; iOS decodes data as its Device', async () => {
    expect(app.deviceId).to.match(/^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/);
    expect(app.deviceBody(), 'JSONEncoder escapes slashes').to.include('https:\\/\\/app.example\\/support');
    const answer = expectAnswer('deviceRegistered', await app.register());
    userId = dataOf<{ userId: number }>(answer).userId;
    const device = await em().findOneOrFail(DeviceSchema, { accountId: t.account.id, uniqueAppDeviceId: app.deviceId });
    expect(device).to.include({
      userId,
      type: IOS.deviceType,
      version: IOS.version,
      pushToken: app.pushToken,
      pushType: 6,
      pushEnabled: true,
      referer: app.referrer,
    });
    // configure: GET messages, with the JSON content type on a GET.
    const first = expectAnswer('messagesPage', await app.findAll());
    expect(page(first).data).to.deep.equal([]);
  });

  it('types and sends: startTyping with no body, NewMessageRequest {time, message, type: 1, referrer}, stopTyping', async () => {
    expectAnswer('eventSent', await app.fire('startTyping'), 'startTyping');
    const answer = expectAnswer('messageSent', await app.store(app.text('Hello from the app')));
    const messageId = dataOf<{ messageId: string | number }>(answer).messageId;
    expect(String(messageId), 'Int or a numeric String').to.match(/^\d+$/);
    sent.push(Number(messageId));
    expectAnswer('eventSent', await app.fire('stopTyping'), 'stopTyping');
    expect(await eventsReceived(2)).to.deep.equal(['startTyping', 'stopTyping']);
    const delivery = (await outboxRows({ serviceId: t.service.id, userId })).find((r) => (r.payload as { id?: number }).id === sent[0]);
    expect(delivery?.payload, 'its referrer becomes requestUrl').to.deep.include({
      message: 'Hello from the app',
      typeId: 1,
      requestUrl: app.referrer,
    });
  });

  it('uploads a photo, a PDF and an "other" file as bare UUIDs without extension or final CRLF, then sends each as {media: {id, mimeType}}', async () => {
    const sample = iosMultipart('B0UNDARY', 'NAME', 'image/jpeg', JPEG);
    expect(sample.subarray(-12).toString('utf8'), 'the body ends at the closing boundary').to.equal('--B0UNDARY--');
    for (const [bytes, partType, stored] of [
      [JPEG, 'image/jpeg', 'image/jpeg'],
      [PDF, 'application/pdf', 'application/pdf'],
      [PNG, 'application/octet-stream', 'image/png'],
    ] as const) {
      const uploaded = expectAnswer('mediaUploaded', await app.upload(partType, bytes), partType);
      const mediaId = dataOf<{ media: string }>(uploaded).media;
      const answer = expectAnswer('messageSent', await app.store(app.media(mediaId, partType)), partType);
      const messageId = Number(dataOf<{ messageId: string | number }>(answer).messageId);
      sent.push(messageId);
      uploads.push({ partType, bytes, stored, messageId });
    }
    const list = page(expectAnswer('messagesPage', await app.findAll())).data;
    for (const upload of uploads) {
      expect(list.find((m) => m.id === upload.messageId)?.media?.mimeType, upload.partType).to.equal(upload.stored);
    }
  });

  it('fetches each file at media/ + its id’s path components without the first two', async () => {
    const list = page(expectAnswer('messagesPage', await app.findAll())).data;
    for (const upload of uploads) {
      const message = list.find((m) => m.id === upload.messageId)!;
      const answer = await app.findMedia(message.media!.id);
      expect(answer.status, `${upload.partType}: ${answer.text.slice(0, 200)}`).to.equal(200);
      expect(answer.bytes.equals(upload.bytes), upload.partType).to.equal(true);
    }
  });

  it('polls after its last id: a rich answer, a carousel and the typing agent', async () => {
    const last = Math.max(...sent);
    const quiet = expectAnswer('messagesPage', await app.findAfter(last));
    expect(page(quiet).data).to.deep.equal([]);
    agentSaid.push(await desk.say(userId, RICH_ANSWER));
    agentSaid.push(await desk.say(userId, CAROUSEL_ANSWER));
    const answer = await typingThenRead(() => app.findAfter(last));
    const [carousel, rich] = page(answer).data;
    expect(page(answer).data.map((m) => m.id)).to.deep.equal([...agentSaid].reverse());
    expect(rich).to.deep.include({ typeId: 2, title: RICH_ANSWER.title, quickReplies: [...RICH_ANSWER.quickReplies] });
    expect(rich?.buttons.map((b) => b.type)).to.deep.equal(['webUrl', 'phoneNumber', 'reply']);
    expect(
      carousel?.carousel.every((card) => card.typeId === 2),
      'each card has the typeId iOS needs beside a carousel key',
    ).to.equal(true);
    expect(page(answer).agent).to.deep.include({ id: ADA.id, name: ADA.name });
    expect(page(answer).agent?.isTyping).to.be.a('number');
  });

  it('reads one message after a push: GET messages/{id}', async () => {
    const answer = expectAnswer('oneMessage', await app.find(agentSaid[0]!));
    expect(dataOf<ParleyMessage>(answer)).to.deep.include({ id: agentSaid[0], message: RICH_ANSWER.message });
  });

  it('hears an operator of the team inbox by push like a bot: GET messages/{id} of an answer and of a file, the operator as the agent', async () => {
    const team = await TeamDesk.signIn(sharedServer().url, await adminToken(), t.account.id);
    const text = await team.say(userId, { message: 'Bea here, I am looking into it.' });
    const media = await team.upload(userId, PDF, 'label.pdf', 'application/pdf');
    const file = await team.say(userId, { media: { id: media, description: 'Your return label' } });
    agentSaid.push(text, file);
    const bea = { id: team.operatorId, name: BEA.name, avatar: BEA.avatar };
    const said = dataOf<ParleyMessage>(expectAnswer('oneMessage', await app.find(text)));
    expect(said).to.deep.include({ id: text, typeId: 2, message: 'Bea here, I am looking into it.' });
    expect(said.agent).to.deep.include(bea);
    const message = dataOf<ParleyMessage>(expectAnswer('oneMessage', await app.find(file)));
    expect(message).to.deep.include({ id: file, typeId: 2 });
    expect(message.agent).to.deep.include(bea);
    expect(message.media).to.include({ mimeType: 'application/pdf', description: 'Your return label' });
    const fetched = await app.findMedia(message.media!.id);
    expect(fetched.status, fetched.text).to.equal(200);
    expect(fetched.bytes.equals(PDF)).to.equal(true);
    const latest = page(expectAnswer('messagesPage', await app.findAll()));
    expect(latest.agent, 'the operator is the current agent').to.deep.include({ id: team.operatorId, name: BEA.name });
  });

  it('loads older messages by its oldest id, and stops when paging.before is empty', async () => {
    const first = expectAnswer('messagesPage', await app.findAll());
    expect(page(first).paging.before, 'all fit on one page').to.equal('');
    const oldest = Math.min(...page(first).data.map((m) => m.id));
    const older = expectAnswer('messagesPage', await app.findBefore(oldest));
    expect(page(older).data).to.deep.equal([]);
    expect(page(older).paging.before).to.equal('');
  });

  it('counts unseen messages ({messageIds, count}) and marks every shown message with a status below 4 seen (1.9)', async () => {
    const unseen = expectAnswer('unseenCount', await app.getUnseen());
    expect(dataOf<{ messageIds: number[]; count: number }>(unseen)).to.deep.equal({ messageIds: agentSaid, count: agentSaid.length });
    const list = page(expectAnswer('messagesPage', await app.findAll())).data;
    // MessagesInteractor: any displayed message with a remote id and a status other than 4, its own too.
    expectAnswer('statusChanged', await app.updateStatusRead(list.filter((m) => m.status !== 4).map((m) => m.id)));
    expect(dataOf<{ count: number }>(expectAnswer('unseenCount', await app.getUnseen())).count).to.equal(0);
  });

  let token: string;
  let registeredUserId: number;

  it('setUserInformation(token, additionalInformation): reconfigures with Authorization, and the conversation continues', async () => {
    token = issueAuthorization(t.account, 'customer-ios-19', Math.floor(Date.now() / 1000) + 7 * 24 * 3600);
    app.userAuthorization = token;
    app.userAdditionalInformation = { name: 'Dana', email: 'dana@example.com' };
    const answer = expectAnswer('deviceRegistered', await app.register(), 'login');
    registeredUserId = dataOf<{ userId: number }>(answer).userId;
    expect(registeredUserId).to.not.equal(userId);
    const list = expectAnswer('messagesPage', await app.findAll(), 'after login');
    expect(page(list).data.map((m) => m.id)).to.include.members([...sent, ...agentSaid]);
    expectAnswer('messageSent', await app.store(app.text('Logged in now')), 'after login');
  });

  it('reset(): the same device, no Authorization, no information: 403, so reset throws and keeps its secret and chat; nothing changes on the device', async () => {
    const device = () => em().findOneOrFail(DeviceSchema, { accountId: t.account.id, uniqueAppDeviceId: app.deviceId });
    const before = await device();
    // reset: authorization and information to nil, then POST devices with the same id and push fields.
    app.userAuthorization = null;
    app.userAdditionalInformation = null;
    expect(app.deviceBody()).to.not.include('userAdditionalInformation');
    const refused = expectError(await app.register(), 403, 'device_requires_authorization', 'reset');
    // iOS does not decode these codes here (validate throws invalidStatusCode first): reset()
    // throws ConfigurationError before `secret = nil` and clearChat(), so the chat stays cached.
    expect(body<{ notifications: Array<{ message: string }> }>(refused).notifications.map((n) => n.message)).to.deep.equal([
      'device_requires_authorization',
      'device_not_registered',
    ]);
    expect(await device(), 'nothing changes on the device').to.deep.equal(before);

    // Still configured, it polls on without Authorization: refused, with the error body iOS
    // decodes on its body-less calls (ParleyErrorResponse: status, notifications, metadata).
    expectError(await app.findAfter(Math.max(...sent)), 401, 'authorization_required', 'poll after a failed reset');
    expectError(await app.fire('startTyping'), 401, 'authorization_required', 'startTyping after a failed reset');
    // configure() again (same id from UserDefaults): the same refusal, state failed.
    expectError(await app.register(), 403, 'device_requires_authorization', 'configure after reset');
    expect(await device(), 'still nothing changed').to.deep.equal(before);

    // Only an app that passes its own new id to configure(_:uniqueDeviceIdentifier:) starts anew.
    const fresh = new IosLibrary({ baseUrl: sharedServer().url, secret: t.account.identification });
    const anonymous = expectAnswer('deviceRegistered', await fresh.register(), 'a new id from the app');
    expect(dataOf<{ userId: number }>(anonymous).userId).to.not.be.oneOf([userId, registeredUserId]);
    expect(page(expectAnswer('messagesPage', await fresh.findAll(), 'a new id from the app')).data).to.deep.equal([]);

    app.userAuthorization = token;
    const history = expectAnswer('messagesPage', await app.findAll(), 'signed in again');
    expect(page(history).data[0]?.message).to.equal('Logged in now');
  });
});
