// Messages through the Client API: sending (and what the owner receives), reading in the
// reference shape with paging, status and unseen counts, isolation between conversations.
import { expect } from 'chai';
import { MessageSchema, type AgentSnapshot } from '../src/db/entities/index.ts';
import { MESSAGE, MESSAGES_PAGE, shapeProblems } from './support/parley-shapes.ts';
import { expectOutbox } from './support/outbox.ts';
import { sharedServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget, type ClientMessage } from './support/widget.ts';

/** Messages from the agent side, written as the Service API (issue #5) will write them. */
async function agentMessage(userId: number, text: string, agent: AgentSnapshot = { id: 7, name: 'Ada', avatar: null }) {
  const em = sharedServer().deps.db.orm.em.fork();
  const message = em.create(MessageSchema, {
    userId,
    deviceId: null,
    typeId: 2,
    message: text,
    media: null,
    agent,
    requestUrl: null,
    status: 2,
  });
  await em.flush();
  return message.id;
}

describe('Client API: messages', function () {
  this.timeout(30_000);
  let t: Tenant;
  let widget: Widget;
  let userId: number;

  beforeEach(async () => {
    t = await tenant();
    widget = new Widget(t.account);
    userId = (await widget.register()).body.data.userId;
  });
  afterEach(() => t.receiver.close());

  it('sends a text message and delivers the exact Message payload to the owner', async () => {
    const answer = await widget.send({ message: 'Hello, I have a question', referer: 'https://shop.example/p/1' });
    expect(answer.status).to.equal(200);
    expect(answer.body.data.messageId).to.be.a('string').and.match(/^\d+$/);
    expect(answer.body.metadata.values.url).to.equal('messages');

    const [request] = await t.receiver.waitFor(1);
    const payload = request?.json as Record<string, unknown>;
    expect(Object.keys(payload)).to.deep.equal([
      'type',
      'id',
      'time',
      'message',
      'typeId',
      'accountIdentification',
      'accountId',
      'requestUrl',
      'user',
    ]);
    expect(payload).to.deep.include({
      type: 'message',
      id: Number(answer.body.data.messageId),
      message: 'Hello, I have a question',
      typeId: 1,
      accountIdentification: t.account.identification,
      accountId: t.account.id,
      requestUrl: 'https://shop.example/p/1',
      user: { id: String(userId), uniqueIdentifier: null, additionalInformation: null },
    });
    expect(payload.time).to.be.closeTo(Date.now() / 1000, 60);
  });

  it('takes requestUrl from the Referer header, and leaves it out when there is none', async () => {
    await widget.call('POST', '/messages', { json: { message: 'with header' }, headers: { referer: 'https://shop.example/h' } });
    await widget.send('without');
    const requests = await t.receiver.waitFor(2);
    expect((requests[0]?.json as { requestUrl: string }).requestUrl).to.equal('https://shop.example/h');
    expect(requests[1]?.json).to.not.have.property('requestUrl');
  });

  it('sends the client system messages with typeId 4 (an app’s silent message too), and refuses any other typeId', async () => {
    // logged_in and deleted_conversation from the web library; any text from an app's silent send.
    for (const text of ['logged_in', 'deleted_conversation', 'The user opened order 1001']) {
      const answer = await widget.send({ message: text, typeId: 4 });
      expect(answer.status, text).to.equal(200);
    }
    const requests = await t.receiver.waitFor(3);
    expect(requests.map((r) => (r.json as { message: string; typeId: number }).typeId)).to.deep.equal([4, 4, 4]);
    expect(requests.map((r) => (r.json as { message: string }).message)).to.deep.equal([
      'logged_in',
      'deleted_conversation',
      'The user opened order 1001',
    ]);

    for (const body of [
      { message: 'pretending to be an agent', typeId: 2 },
      { message: 'x', typeId: 5 },
      { message: 'user_registered', typeId: 4 },
      { media: { id: '00000000-0000-4000-8000-000000000000' }, typeId: 4 },
    ]) {
      const answer = await widget.send(body);
      expect(answer.status, JSON.stringify(body)).to.equal(422);
    }
    expect((await widget.messages()).body.data, 'system messages are not shown to clients').to.deep.equal([]);
  });

  it('refuses bad message bodies without storing or delivering anything', async () => {
    const cases: Array<[Record<string, unknown> | string, number]> = [
      [{}, 422],
      [{ message: '' }, 422],
      [{ message: 42 }, 422],
      [{ message: 'x'.repeat(5001) }, 422],
      [{ message: 'both', media: { id: '00000000-0000-4000-8000-000000000000' } }, 422],
      [{ media: { id: 'not-a-uuid' } }, 422],
      [{ media: { id: '00000000-0000-4000-8000-000000000000' } }, 404],
    ];
    for (const [body, status] of cases) {
      const answer = await widget.send(body);
      expect(answer.status, JSON.stringify(body).slice(0, 80)).to.equal(status);
      expect(answer.body.status).to.equal('ERROR');
    }
    const malformed = await widget.call('POST', '/messages', { raw: '{"message":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).to.equal(400);
    // Read right after the last answer: nothing was enqueued, so nothing can be delivered.
    await expectOutbox({ serviceId: t.service.id, userId }, 0, 'deliveries of refused messages');
    expect(await sharedServer().deps.db.orm.em.fork().count(MessageSchema, { userId })).to.equal(0);
  });

  it('lists messages newest first in the shape of the reference bodies', async () => {
    await widget.send('Hello, i have a question');
    await agentMessage(userId, 'hi!');
    const answer = await widget.messages();
    expect(answer.status).to.equal(200);

    const ours = answer.body as unknown as Record<string, unknown>;
    const [agentSide, userSide] = answer.body.data;
    expect([
      ...shapeProblems(ours, MESSAGES_PAGE, 'page'),
      ...answer.body.data.flatMap((message, i) => shapeProblems(message, MESSAGE, `data[${i}]`)),
    ]).to.deep.equal([]);
    expect(agentSide).to.deep.include({
      message: 'hi!',
      typeId: 2,
      agent: { id: 7, name: 'Ada', avatar: null, isTyping: null },
      image: null,
      media: null,
      status: 2,
    });
    expect(userSide).to.deep.include({ message: 'Hello, i have a question', typeId: 1, agent: null });
    expect(agentSide!.id).to.be.greaterThan(userSide!.id);
    expect(ours.paging).to.deep.equal({ before: '', after: `/messages/after:${agentSide!.id}` });
    expect(ours.agent, 'no current agent yet').to.equal(null);
    expect(ours).to.include({ stickyMessage: null, welcomeMessage: null });
  });

  it('pages with before: and after:, and reads one message', async () => {
    const ids: number[] = [];
    for (let i = 1; i <= 55; i++) ids.push(Number((await widget.send(`m${i}`)).body.data.messageId));
    const first = await widget.messages();
    const page = first.body.data;
    expect(page).to.have.length(50);
    expect(page[0]?.message).to.equal('m55');
    const paging = (first.body as unknown as { paging: { before: string; after: string } }).paging;
    expect(paging.before).to.equal(`/messages/before:${ids[5]}`);

    const older = await widget.messages(paging.before);
    expect(older.body.data.map((m) => m.message)).to.deep.equal(['m5', 'm4', 'm3', 'm2', 'm1']);
    expect((older.body as unknown as { paging: { before: string } }).paging.before).to.equal('');

    const newer = await widget.messages(`/messages/after:${ids[52]}`);
    expect(newer.body.data.map((m) => m.message)).to.deep.equal(['m55', 'm54']);

    const one = await widget.call<ClientMessage>('GET', `/messages/${ids[9]}`);
    expect(one.body.data.message).to.equal('m10');
    const bad = await widget.call('GET', '/messages/before:abc');
    expect(bad.status).to.equal(422);
  });

  it('counts unseen agent messages and raises their status', async () => {
    const a = await agentMessage(userId, 'one');
    const b = await agentMessage(userId, 'two');
    const unseen = await widget.call<{ messageIds: number[]; count: number }>('GET', '/messages/unseen/count');
    expect(unseen.body.data).to.deep.equal({ messageIds: [a, b], count: 2 });
    expect(unseen.body.metadata.values.url).to.equal('messages/unseen/count');

    const seen = await widget.call('PUT', '/messages/status/4', { json: { messageIds: [a] } });
    expect(seen.status).to.equal(200);
    const lowered = await widget.call('PUT', '/messages/status/3', { json: { messageIds: [a] } });
    expect(lowered.status).to.equal(200);
    const after = await widget.call<{ messageIds: number[]; count: number }>('GET', '/messages/unseen/count');
    expect(after.body.data).to.deep.equal({ messageIds: [b], count: 1 });
    const list = await widget.messages();
    expect(list.body.data.find((m) => m.id === a)?.status, 'status never goes down').to.equal(4);

    expect((await widget.call('PUT', '/messages/status/5', { json: { messageIds: [a] } })).status).to.equal(422);
    expect((await widget.call('PUT', '/messages/status/4', { json: { messageIds: [] } })).status).to.equal(422);
  });

  it('keeps every conversation to its own devices', async () => {
    const mine = Number((await widget.send('mine')).body.data.messageId);
    const other = new Widget(t.account);
    await other.register();
    const theirs = Number((await other.send('theirs')).body.data.messageId);
    const agentToOther = await agentMessage((await other.register()).body.data.userId, 'for them only');

    expect((await widget.messages()).body.data.map((m) => m.message)).to.deep.equal(['mine']);
    const read = await widget.call('GET', `/messages/${theirs}`);
    expect(read.status).to.equal(404);
    expect(read.body.notifications[0]?.message).to.equal('message_not_found');
    const mark = await widget.call('PUT', '/messages/status/4', { json: { messageIds: [mine, agentToOther] } });
    expect(mark.status).to.equal(404);
    const unseen = await widget.call<{ count: number }>('GET', '/messages/unseen/count');
    expect(unseen.body.data.count).to.equal(0);
    const untouched = await other.call<{ count: number }>('GET', '/messages/unseen/count');
    expect(untouched.body.data.count, 'a refused status change changes nothing').to.equal(1);
  });

  it('needs a registered device and its customer’s authorization to open the conversation', async () => {
    const stranger = new Widget(t.account);
    const unknown = await stranger.messages();
    expect(unknown.status).to.equal(404);
    expect(unknown.body.notifications[0]?.message).to.equal('device_not_found');

    const customer = new Widget(t.account).signIn('customer-private');
    await customer.register();
    await customer.send('private');
    const withoutAuth = new Widget(t.account, customer.deviceId);
    const answer = await withoutAuth.messages();
    expect(answer.status).to.equal(401);
    expect(answer.body.notifications[0]?.message).to.equal('authorization_required');
    const otherCustomer = new Widget(t.account, customer.deviceId).signIn('customer-other');
    expect((await otherCustomer.messages()).status).to.equal(403);
  });

  it('answers the same under every /clientApi version prefix', async () => {
    for (const prefix of ['/clientApi/v1.6', '/clientApi/v1.7', '/clientApi/v1.8', '/clientApi/v1.9']) {
      const versioned = new Widget(t.account, widget.deviceId, undefined, prefix);
      const sent = await versioned.send(`via ${prefix}`);
      expect(sent.status, prefix).to.equal(200);
      expect(sent.body.metadata.values.url).to.equal('messages');
      const list = await versioned.messages();
      expect(list.body.data[0]?.message).to.equal(`via ${prefix}`);
      // Relative to the version root, whatever the prefix (Android appends it to its base URL).
      expect((list.body as unknown as { paging: { after: string } }).paging.after).to.match(/^\/messages\/after:\d+$/);
    }
    expect((await new Widget(t.account, widget.deviceId, undefined, '/clientApi/v2.0').messages()).status).to.equal(404);
  });

  it('serves 1.2–1.5 as aliases, and pages when paging.before is appended to a base URL ending in a slash', async () => {
    for (let i = 1; i <= 52; i++) await widget.send(`m${i}`);
    for (const prefix of ['/clientApi/v1.2', '/clientApi/v1.5', '/clientApi/v1.9']) {
      const android = new Widget(t.account, widget.deviceId, undefined, `${prefix}/`);
      const first = await android.call<ClientMessage[]>('GET', 'messages');
      expect(first.status, prefix).to.equal(200);
      const { before } = (first.body as unknown as { paging: { before: string } }).paging;
      expect(before).to.match(/^\/messages\/before:\d+$/);
      // Android: base URL + paging.before, i.e. `…/clientApi/v1.9//messages/before:N`.
      const older = await android.call<ClientMessage[]>('GET', before);
      expect(older.status, `${prefix}/${before}`).to.equal(200);
      expect(older.body.data.map((m) => m.message)).to.deep.equal(['m2', 'm1']);
    }
  });
});
