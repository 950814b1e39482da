// Issue 19: the Parley web library (2.0.0) against Palaver, request for request as it sends
// them from a page of another origin: `/clientApi/v1.9`, string bodies the browser types
// text/plain;charset=UTF-8, an empty Authorization while anonymous, a lowercase uuid device,
// FormData uploads with the original file names, a preflight before each call. One
// conversation from first registration to logout; every answer is held to the one schema of
// what the three libraries decode (test/support/parley-shapes.ts).
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
  RICH_ANSWER,
  ServiceDesk,
  TeamDesk,
  WEB,
  WEB_MEDIA_TYPES,
  WebLibrary,
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

describe('Parley web library 2.0.0: one conversation, request for request (issue 19)', function () {
  this.timeout(30_000);
  let t: Tenant;
  let web: WebLibrary;
  let desk: ServiceDesk;
  let userId: number;
  let registeredUserId: number;
  const sent: number[] = [];
  const agentSaid: number[] = [];
  let shown: ParleyMessage[] = [];

  before(async () => {
    t = await tenant();
    web = new WebLibrary({ baseUrl: sharedServer().url, accountIdentification: t.account.identification });
    desk = new ServiceDesk(sharedServer().url, t.service.apiKey);
  });
  after(() => t.receiver.close());

  /** The agent starts typing and the page is read at once (the test configuration stops it after 300 ms). */
  async function typingThenRead(read: () => Promise<WireAnswer>): Promise<WireAnswer> {
    for (let attempt = 1; ; attempt++) {
      await desk.typing(userId, true);
      const answer = expectAnswer('messagesPage', await read());
      if (page(answer).agent?.isTyping !== null || attempt === 3) return answer;
    }
  }

  it('registers anonymously: POST /devices as a string body, with an empty Authorization and a lowercase uuid device', async () => {
    expect(web.deviceIdentification).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const answer = expectAnswer('deviceRegistered', await web.subscribeDevice());
    expect(answer.status).to.equal(200);
    expect(answer.headers.get('access-control-allow-origin'), 'the page may read the answer').to.equal(web.origin);
    userId = dataOf<{ userId: number }>(answer).userId;
    const device = await em().findOneOrFail(DeviceSchema, { accountId: t.account.id, uniqueAppDeviceId: web.deviceIdentification });
    expect(device, 'the text/plain body was read').to.include({ userId, type: WEB.deviceType, version: WEB.version, referer: web.page });
  });

  it('sends a text: {message, referer}', async () => {
    const answer = expectAnswer('messageSent', await web.sendMessage('Hello, my parcel has not arrived'));
    sent.push(Number(dataOf<{ messageId: string }>(answer).messageId));
    const [delivery] = (await outboxRows({ serviceId: t.service.id, userId })).filter((r) => r.kind === 'message');
    expect(delivery?.payload).to.deep.include({ message: 'Hello, my parcel has not arrived', typeId: 1, requestUrl: web.page });
  });

  it('uploads a PNG and a PDF as FormData under their own names, and sends each as {media: {id, description}}', async () => {
    for (const [bytes, name, type] of [
      [PNG, 'parcel photo.png', 'image/png'],
      [PDF, 'invoice 2026-001.pdf', 'application/pdf'],
    ] as const) {
      const uploaded = expectAnswer('mediaUploaded', await web.uploadMedia(bytes, name, type), name);
      const mediaId = dataOf<{ media: string }>(uploaded).media;
      const answer = expectAnswer('messageSent', await web.sendMedia(mediaId, name), name);
      sent.push(Number(dataOf<{ messageId: string }>(answer).messageId));
    }
  });

  it('reads the first page: its messages newest first, a rich answer, a carousel and the typing agent', async () => {
    agentSaid.push(await desk.say(userId, RICH_ANSWER));
    agentSaid.push(await desk.say(userId, CAROUSEL_ANSWER));
    const answer = await typingThenRead(() => web.getMessages());
    shown = page(answer).data;
    expect(
      shown.map((m) => m.id),
      'newest first',
    ).to.deep.equal([...agentSaid].reverse().concat([...sent].reverse()));
    const [carousel, rich, pdf, png, text] = shown;
    expect(text).to.deep.include({ message: 'Hello, my parcel has not arrived', typeId: 1, agent: null });
    expect(png?.media).to.include({ mimeType: 'image/png', description: 'parcel photo.png' });
    expect(pdf?.media).to.include({ mimeType: 'application/pdf', description: 'invoice 2026-001.pdf' });
    expect(rich).to.deep.include({
      typeId: 2,
      title: RICH_ANSWER.title,
      message: RICH_ANSWER.message,
      quickReplies: [...RICH_ANSWER.quickReplies],
    });
    expect(rich?.buttons).to.deep.equal(RICH_ANSWER.buttons);
    expect(rich?.agent).to.deep.include({ id: ADA.id, name: ADA.name, avatar: ADA.avatar });
    expect(carousel?.carousel.map((c) => c.title)).to.deep.equal(['Blue chair', 'Red chair']);
    expect(page(answer).agent, 'the current agent').to.deep.include({ id: ADA.id, name: ADA.name });
    expect(page(answer).agent?.isTyping, 'typing: a number, as Android decodes it').to.be.a('number');
  });

  it('fetches each file by media.year/month/day/filename, in a type it renders', async () => {
    for (const [message, bytes] of [
      [shown[3], PNG],
      [shown[2], PDF],
    ] as const) {
      const { year, month, day, filename } = message!.media!;
      const answer = await web.getMedia(year, month, day, filename);
      expect(answer.status, answer.text).to.equal(200);
      const type = answer.headers.get('content-type') ?? '';
      expect(
        WEB_MEDIA_TYPES.some((known) => type.includes(known)),
        `${type}: web accepts only the types it lists`,
      ).to.equal(true);
      expect(answer.bytes.equals(bytes)).to.equal(true);
    }
  });

  it('polls after the newest id it has, and pages before the oldest until a page is empty', async () => {
    const newest = Math.max(...shown.map((m) => m.id));
    const quiet = expectAnswer('messagesPage', await web.getMessages(newest, 'after'));
    expect(page(quiet).data).to.deep.equal([]);
    agentSaid.push(await desk.say(userId, { message: 'It is on its way again.', agent: ADA }));
    const polled = expectAnswer('messagesPage', await web.getMessages(newest, 'after'));
    expect(page(polled).data.map((m) => m.message)).to.deep.equal(['It is on its way again.']);
    expect(page(polled).stickyMessage, 'kept on every poll').to.equal(null);

    const oldest = Math.min(...shown.map((m) => m.id));
    const older = expectAnswer('messagesPage', await web.getMessages(oldest, 'before'));
    expect(page(older).data, 'an empty page stops its paging').to.deep.equal([]);
  });

  it("polls an operator's answers from the team inbox like a bot's: a text and a file, the operator as the agent", async () => {
    const team = await TeamDesk.signIn(sharedServer().url, await adminToken(), t.account.id);
    const newest = Math.max(...sent, ...agentSaid);
    const text = await team.say(userId, { message: 'Bea here, I am looking into it.' });
    const media = await team.upload(userId, PDF, 'label.pdf', 'application/pdf');
    const file = await team.say(userId, { media: { id: media, description: 'Your return label' } });
    agentSaid.push(text, file);
    const polled = page(expectAnswer('messagesPage', await web.getMessages(newest, 'after'))).data;
    expect(polled.map((m) => m.id)).to.deep.equal([file, text]);
    const bea = { id: team.operatorId, name: BEA.name, avatar: BEA.avatar };
    for (const message of polled) {
      expect(message).to.deep.include({ typeId: 2 });
      expect(message.agent).to.deep.include(bea);
    }
    expect(polled[1]?.message).to.equal('Bea here, I am looking into it.');
    expect(polled[0]?.media).to.include({ mimeType: 'application/pdf', description: 'Your return label' });
    const { year, month, day, filename } = polled[0]!.media!;
    const fetched = await web.getMedia(year, month, day, filename);
    expect(fetched.status, fetched.text).to.equal(200);
    expect(fetched.bytes.equals(PDF)).to.equal(true);
    const latest = page(expectAnswer('messagesPage', await web.getMessages()));
    expect(latest.agent, 'the operator is the current agent').to.deep.include({ id: team.operatorId, name: BEA.name });
  });

  it('counts unseen messages, and marks every message below status 4 seen (its own too)', async () => {
    const unseen = expectAnswer('unseenCount', await web.getUnreadMessagesCount());
    expect(dataOf<{ messageIds: number[]; count: number }>(unseen)).to.deep.equal({ messageIds: agentSaid, count: agentSaid.length });
    const all = page(expectAnswer('messagesPage', await web.getMessages())).data;
    const below = all.filter((m) => m.status < 4).map((m) => m.id);
    expect(below).to.have.length(sent.length + agentSaid.length);
    expectAnswer('statusChanged', await web.updateMessagesStatus(4, below));
    const after = expectAnswer('unseenCount', await web.getUnreadMessagesCount());
    expect(dataOf<{ count: number }>(after).count).to.equal(0);
  });

  it('logs in: the same device with authHeader, and the conversation continues', async () => {
    web.authorization = issueAuthorization(t.account, 'customer-web-19', Math.floor(Date.now() / 1000) + 3600);
    const answer = expectAnswer('deviceRegistered', await web.subscribeDevice({ name: 'Dana' }));
    registeredUserId = dataOf<{ userId: number }>(answer).userId;
    expect(registeredUserId).to.not.equal(userId);
    const list = expectAnswer('messagesPage', await web.getMessages());
    expect(page(list).data.map((m) => m.id)).to.include.members([...sent, ...agentSaid]);
    expectAnswer('messageSent', await web.sendMessage('Logged in now'));
  });

  it('logs out (authHeader cleared): refused with device_requires_authorization first, nothing changes, and its next message starts a fresh device', async () => {
    const before = await em().findOneOrFail(DeviceSchema, { accountId: t.account.id, uniqueAppDeviceId: web.deviceIdentification });
    const registeredToken = web.authorization;
    const customerDevice = web.deviceIdentification;

    web.authorization = '';
    const refused = expectError(await web.subscribeDevice(), 403, 'device_requires_authorization', 'logout');
    // What web reads: status ERROR, notifications[0] an error with the one code it knows. It shows
    // "continued in a logged-in environment", stops polling, and on the next send makes a new uuid.
    expect(body<{ notifications: unknown[] }>(refused).notifications).to.deep.equal([
      { type: 'error', message: 'device_requires_authorization' },
      { type: 'error', message: 'device_not_registered' },
    ]);
    expect(refused.headers.get('access-control-allow-origin')).to.equal(web.origin);
    const after = await em().findOneOrFail(DeviceSchema, { accountId: t.account.id, uniqueAppDeviceId: customerDevice });
    expect(after, 'the device is untouched').to.deep.equal(before);

    // A poll that still ran with the old id: refused too (web clears what it shows on any error there).
    expectError(await web.getMessages(), 401, 'authorization_required', 'poll of the old device, anonymous');

    // The next message: a fresh lowercase uuid, registered anonymously, then the message.
    const fresh = web.newDeviceIdentification();
    expect(fresh).to.not.equal(customerDevice);
    const registered = expectAnswer('deviceRegistered', await web.subscribeDevice(), 'fresh device');
    expect(dataOf<{ userId: number }>(registered).userId).to.not.be.oneOf([userId, registeredUserId]);
    expectAnswer('messageSent', await web.sendMessage('Anonymous again'), 'fresh device');
    expect(page(expectAnswer('messagesPage', await web.getMessages())).data.map((m) => m.message)).to.deep.equal(['Anonymous again']);

    // The customer's device, signed in again, still has the whole history.
    web.deviceIdentification = customerDevice;
    web.authorization = registeredToken;
    const history = expectAnswer('messagesPage', await web.getMessages(), 'the customer again');
    expect(page(history).data.map((m) => m.message))
      .to.include('Logged in now')
      .and.not.include('Anonymous again');
  });

  it('had every call preflighted and allowed for its origin', () => {
    expect(web.preflights.length).to.be.greaterThan(10);
    for (const preflight of web.preflights) {
      expect(preflight.status, preflight.request.url).to.equal(204);
      expect(preflight.headers.get('access-control-allow-origin'), preflight.request.url).to.equal(web.origin);
      expect(preflight.headers.get('access-control-allow-headers'), preflight.request.url).to.include('x-iris-identification');
    }
  });
});
