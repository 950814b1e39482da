// Client messages in one statement (src/conversations/messages-at-once.ts): the embedded
// database's client writer writes a batch, its deliveries and the inbox's side with one
// statement that draws the ids and checks that every sender is still as its caller read it.
// The statement is exercised directly on both databases (nothing else runs in these tests
// while it does); the writer takes it only on the embedded one, where a sender changed since
// its socket connected sends its message the locked way, the webhook showing the user as it is.
// The agent writer does the same with Service answers (conversations/agents.ts): written at
// once, and a refusal (a user of another account) the locked way, with its error.
import { expect } from 'chai';
import { recordUserMessagesAtOnce, type SeenUserMessage } from '../src/conversations/messages-at-once.ts';
import { AccountSchema, DeliverySchema, DeviceSchema, MessageSchema, UserSchema } from '../src/db/entities/index.ts';
import { heldTransaction } from '../src/db/tx/held.ts';
import { outletsOf } from '../src/db/tx/outlets.ts';
import { messagePayload } from '../src/presenters/webhook-payloads.ts';
import { mode } from './support/database.ts';
import { adminToken } from './support/factories.ts';
import { client } from './support/http.ts';
import { receivedExactly } from './support/outbox.ts';
import { sharedServer } from './support/server.ts';
import { WidgetSocket } from './support/sockets.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

const em = () => sharedServer().deps.db.orm.em.fork();

/** A text message of the widget's user, as a socket's caller read the user at its handshake. */
async function seen(t: Tenant, widget: Widget, text: string, clientMessageId: string | null = null): Promise<SeenUserMessage> {
  const fork = em();
  const account = await fork.findOneOrFail(AccountSchema, { id: t.account.id });
  const device = await fork.findOneOrFail(DeviceSchema, { accountId: t.account.id, uniqueAppDeviceId: widget.deviceId });
  const user = await fork.findOneOrFail(UserSchema, { id: device.userId });
  return { account, user, input: { typeId: 1, text, media: null, deviceId: device.id, requestUrl: null, clientMessageId } };
}

/** Runs the statement in a held transaction, and hands what it committed on as the writer does. */
async function atOnce(messages: SeenUserMessage[]) {
  const { result, committed } = await heldTransaction(em(), (tx) => recordUserMessagesAtOnce(tx, messages));
  outletsOf(em()).deliver(committed);
  return { written: Array.isArray(result) ? result : null, not: Array.isArray(result) ? null : result, committed };
}

const rowsOf = async (userId: number) => ({
  messages: await em().count(MessageSchema, { userId }),
  deliveries: await em().count(DeliverySchema, { orderingKey: userId }),
});

async function oneStatementBatches(written: boolean, writer: 'client' | 'agent' = 'client'): Promise<number> {
  const metric = await sharedServer().deps.metrics.oneStatementBatches.get();
  return metric.values.find((v) => v.labels.writer === writer && v.labels.written === String(written))?.value ?? 0;
}

/** A Service's answer through the Service API. */
const answer = (t: Tenant, userId: number, message: string, agent = { id: 7, name: 'Ada' }) =>
  client(sharedServer().url).post<{ id?: number }>(`/users/${userId}/messages`, {
    token: t.service.apiKey,
    json: { message, agent },
  });

describe('client messages in one statement', function () {
  this.timeout(30_000);
  let t: Tenant;
  let widgets: Widget[];
  let userIds: number[];

  beforeEach(async () => {
    t = await tenant();
    widgets = [new Widget(t.account), new Widget(t.account)];
    userIds = [];
    for (const widget of widgets) userIds.push((await widget.register()).body.data.userId);
  });
  afterEach(() => t.receiver.close());

  it('writes a batch and its deliveries, each payload with its own message id, in conversation order', async () => {
    const [a, b] = widgets as [Widget, Widget];
    const [aId, bId] = userIds as [number, number];
    const batch = [await seen(t, a, 'first'), await seen(t, b, 'other'), await seen(t, a, 'second')];
    const { written: result, committed } = await atOnce(batch);
    expect(result, 'written').to.not.equal(null);
    const [first, other, second] = result ?? [];
    expect(second?.message.id).to.be.greaterThan(first?.message.id ?? Infinity);
    expect(second?.prevId, 'the second continues the first').to.equal(first?.message.id);
    expect(first?.prevId).to.equal(null);
    expect(other?.message.userId).to.equal(bId);

    // Each delivery's bytes are the payload the locked way writes, with its message's id.
    const stored = await em().find(DeliverySchema, { orderingKey: { $in: [aId, bId] } }, { orderBy: { seq: 'asc' } });
    expect(stored).to.have.length(3);
    batch.forEach((item, i) => {
      const message = result?.[i]?.message;
      if (!message) throw new Error('no message');
      const expected = JSON.stringify(messagePayload(message, item.account, item.user));
      const delivery = stored.find((d) => (JSON.parse(d.payload) as { id: number }).id === message.id);
      expect(delivery?.payload, `message ${i}`).to.equal(expected);
    });
    // The worker got the bytes the statement wrote (no read back: it fills the ids itself).
    for (const handoff of committed.handoffs) {
      expect(stored.find((d) => d.id === handoff.id)?.payload).to.equal(handoff.payload);
    }
    const received = await receivedExactly(t.receiver, t.service.id, 3);
    expect(received.map((r) => (r.json as { id: number }).id)).to.have.members(result?.map((r) => r.message.id) ?? []);
    // The inbox's side, written by the same statement: the customers wait.
    const states = await em()
      .getConnection()
      .execute<Array<{ waiting_since: unknown }>>('select waiting_since from conversation_states where user_id in (?, ?)', [aId, bId]);
    expect(states.map((s) => s.waiting_since !== null)).to.deep.equal([true, true]);
  });

  it('writes nothing when a sender is not as its caller read it, or a client id was sent before', async () => {
    const [a] = widgets as [Widget];
    const userId = userIds[0] as number;
    const before = await rowsOf(userId);
    const token = await adminToken();
    const staleOnly = { stale: [userId], standby: [] };
    const api = client(sharedServer().url);
    // Each case with what the statement says of it: the senders that changed, the accounts with a standby Service.
    const cases: Array<
      [string, (m: SeenUserMessage) => SeenUserMessage | Promise<SeenUserMessage>, { stale: number[]; standby: number[] }]
    > = [
      ['additional information changed', (m) => ({ ...m, user: { ...m.user, additionalInformation: { plan: 'gold' } } }), staleOnly],
      ['another owner', (m) => ({ ...m, user: { ...m.user, ownerServiceId: m.user.ownerServiceId + 1000 } }), staleOnly],
      ['another identifier', (m) => ({ ...m, user: { ...m.user, uniqueIdentifier: 'someone-else' } }), staleOnly],
      ['another account', (m) => ({ ...m, account: { ...m.account, id: m.account.id + 1000 } }), staleOnly],
      ['an erased user', (m) => ({ ...m, user: { ...m.user, id: 2_000_000_000 } }), { stale: [2_000_000_000], standby: [] }],
      [
        'a client id sent before',
        async (m) => {
          const sent = await a.send({ message: 'once', clientMessageId: 'sent-before-0001' });
          expect(sent.status).to.equal(200);
          before.messages += 1;
          before.deliveries += 1;
          return { ...m, input: { ...m.input, clientMessageId: 'sent-before-0001' } };
        },
        { stale: [], standby: [] },
      ],
      [
        'a standby Service in the account',
        async (m) => {
          const observer = await api.post<{ id: number }>(`/adminApi/accounts/${t.account.id}/services`, {
            token,
            json: { name: 'Observer', webhookUrl: null },
          });
          const standby = await api.patch(`/adminApi/services/${observer.body.data.id}`, { token, json: { standby: 'all' } });
          expect(standby.status, standby.text).to.equal(200);
          return m;
        },
        { stale: [], standby: [t.account.id] },
      ],
    ];
    for (const [name, change, why] of cases) {
      const message = await change(await seen(t, a, name));
      const { written, not } = await atOnce([message]);
      expect(written, name).to.equal(null);
      expect(not, name).to.deep.equal(why);
      expect(await rowsOf(userId), name).to.deep.equal(before);
    }
  });

  it('sends a socket message from a user changed since the socket connected the locked way, as the user is now', async () => {
    const [a] = widgets as [Widget];
    const socket = new WidgetSocket(a);
    try {
      await socket.connected();
      const [tried, failed] = [await oneStatementBatches(true), await oneStatementBatches(false)];
      const sent = await socket.emit('message', { message: 'as connected' });
      expect(sent.data).to.have.property('messageId');
      await em().nativeUpdate(UserSchema, { id: userIds[0] as number }, { additionalInformation: { plan: 'gold' } });
      const after = await socket.emit('message', { message: 'after the change' });
      expect(after.data).to.have.property('messageId');
      // The socket read its user again: its next message goes at once again.
      const next = await socket.emit('message', { message: 'and again' });
      expect(next.data).to.have.property('messageId');
      const received = await receivedExactly(t.receiver, t.service.id, 3);
      const users = received.map((r) => (r.json as { user: { additionalInformation: unknown } }).user.additionalInformation);
      expect(users).to.deep.equal([null, { plan: 'gold' }, { plan: 'gold' }]);
      // Only the embedded database's writer tries the one statement.
      const embedded = mode === 'embedded' ? 1 : 0;
      expect(await oneStatementBatches(true), 'written at once').to.equal(tried + 2 * embedded);
      expect(await oneStatementBatches(false), 'checked and written the locked way').to.equal(failed + embedded);
    } finally {
      socket.close();
    }
  });

  it("writes a Service's answers at once, and a refusal the locked way, with its error", async () => {
    const [a] = widgets as [Widget];
    const userId = userIds[0] as number;
    const socket = new WidgetSocket(a);
    try {
      await socket.connected();
      const [tried, failed] = [await oneStatementBatches(true, 'agent'), await oneStatementBatches(false, 'agent')];
      const first = await answer(t, userId, 'Hello, how can I help?');
      expect(first.status, first.text).to.equal(201);
      const again = await answer(t, userId, 'Still here.');
      expect(again.status, again.text).to.equal(201);
      const messages = await socket.waitForExactly('message', 2);
      expect(messages.map((m) => m.message)).to.deep.equal(['Hello, how can I help?', 'Still here.']);
      expect(messages.map((m) => m.id)).to.deep.equal([first.body.data.id, again.body.data.id]);
      // The current agent changed with the first answer only (its notice went with the message's).
      expect(socket.events('agent').map((e) => (e.agent as { name: string }).name)).to.deep.equal(['Ada']);
      const other = await tenant();
      try {
        const refused = await answer(other, userId, 'Not my customer');
        expect(refused.status).to.equal(404);
        expect((refused.body as { notifications: Array<{ message: string }> }).notifications[0]?.message).to.equal('user_not_found');
      } finally {
        await other.receiver.close();
      }
      const embedded = mode === 'embedded' ? 1 : 0;
      expect(await oneStatementBatches(true, 'agent'), 'written at once').to.equal(tried + 2 * embedded);
      expect(await oneStatementBatches(false, 'agent'), 'refused the locked way').to.equal(failed + embedded);
      expect(await em().count(MessageSchema, { userId }), 'no message of the refused answer').to.equal(2);
    } finally {
      socket.close();
    }
  });
});
