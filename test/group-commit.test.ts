// Group commit (src/db/tx/group-commit.ts) of chat clients' messages and of agents' messages:
// many senders at once, each answered only after its own message (and delivery) committed, in
// order per conversation; a message that cannot be written fails alone; a client message whose
// conversation was merged while it waited goes to the conversation it was merged into, an agent
// message to it is refused with the new id.
import { expect } from 'chai';
import type { AgentMessageInput } from '../src/conversations/agents.ts';
import type { ClientMessage } from '../src/conversations/client-messages.ts';
import { AccountSchema, DeliverySchema, DeviceSchema, MessageSchema, UserSchema } from '../src/db/entities/index.ts';
import { AppError } from '../src/errors.ts';
import { createAccount } from './support/factories.ts';
import { client } from './support/http.ts';
import { outboxSettled } from './support/outbox.ts';
import { sharedServer } from './support/server.ts';
import { WidgetSocket } from './support/sockets.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

/** What a client call holds when it hands its message to the writer: the records it read. */
async function clientMessage(t: Tenant, widget: Widget, text: string): Promise<ClientMessage> {
  const em = sharedServer().deps.db.orm.em.fork();
  const device = await em.findOneOrFail(DeviceSchema, { accountId: t.account.id, uniqueAppDeviceId: widget.deviceId });
  return {
    account: await em.findOneOrFail(AccountSchema, { id: t.account.id }),
    user: await em.findOneOrFail(UserSchema, { id: device.userId }),
    device,
    input: { typeId: 1, text, media: null, requestUrl: null },
  };
}

async function batchesSoFar(writer: 'client' | 'agent'): Promise<{ count: number; sum: number }> {
  const metric = await sharedServer().deps.metrics.messageBatchSize.get();
  const value = (name: string) => metric.values.find((v) => v.metricName === name && v.labels.writer === writer)?.value ?? 0;
  return { count: value('palaver_message_batch_size_count'), sum: value('palaver_message_batch_size_sum') };
}

/** Each delivery's attempts so far, by its id (the webhook-id). */
async function attemptsOf(ids: string[]): Promise<Map<string, number>> {
  const em = sharedServer().deps.db.orm.em.fork();
  const rows = await em.find(DeliverySchema, { id: { $in: ids } });
  return new Map(rows.map((r) => [String(r.id), r.attempts]));
}

describe('group commit of client messages', function () {
  this.timeout(60_000);
  let t: Tenant;

  beforeEach(async () => {
    t = await tenant();
  });
  afterEach(() => t.receiver.close());

  it('accepts many concurrent senders, each in order, each delivered once in order, sharing transactions', async () => {
    const widgets = Array.from({ length: 16 }, () => new Widget(t.account));
    const userIds = await Promise.all(widgets.map(async (w) => (await w.register()).body.data.userId));
    const before = await batchesSoFar('client');
    const perDevice = 8;
    // Each device sends its messages one after the other; the devices all at once.
    const acknowledged = await Promise.all(
      widgets.map(async (widget, d) => {
        const ids: number[] = [];
        for (let i = 0; i < perDevice; i++) {
          const answer = await widget.send({ message: `device ${d} message ${i}` });
          expect(answer.status, answer.text).to.equal(200);
          ids.push(Number(answer.body.data.messageId));
        }
        return ids;
      }),
    );
    const total = widgets.length * perDevice;
    const after = await batchesSoFar('client');
    expect(after.sum - before.sum).to.equal(total);
    // Shared transactions: fewer commits than messages.
    expect(after.count - before.count).to.be.below(total);

    const em = sharedServer().deps.db.orm.em.fork();
    for (const [d, userId] of userIds.entries()) {
      const rows = await em.find(MessageSchema, { userId }, { orderBy: { id: 'asc' } });
      expect(rows.map((m) => m.message)).to.deep.equal(Array.from({ length: perDevice }, (_, i) => `device ${d} message ${i}`));
      // Acknowledged ids are the stored ones, increasing in the order they were answered.
      expect(rows.map((m) => m.id)).to.deep.equal(acknowledged[d]);
    }

    // One delivery row a message, each delivered; a row sent more than once was sent again only
    // because an attempt failed (the tests' 1 s webhook timeout can pass on a loaded machine): at
    // most as many requests as attempts. A Service tells a retry by its webhook-id.
    const rows = await outboxSettled(t.service.id, 30_000);
    expect(rows.map((r) => r.state)).to.deep.equal(rows.map(() => 'delivered'));
    expect(rows).to.have.length(total);
    const attempts = await attemptsOf(rows.map((r) => r.id));
    const ids = t.receiver.requests.map((r) => String(r.headers['webhook-id']));
    expect(new Set(ids), 'requests only for the rows').to.deep.equal(new Set(rows.map((r) => r.id)));
    for (const row of rows) {
      const sent = ids.filter((id) => id === row.id).length;
      expect(sent, `requests of ${row.id}, attempts ${attempts.get(row.id)}`).to.be.within(1, attempts.get(row.id)!);
    }
    // Every row answered: every request its attempts made has arrived. The first of each, in order.
    const received = t.receiver.requests.filter((r, i) => ids.indexOf(String(r.headers['webhook-id'])) === i);
    expect(received).to.have.length(total);
    for (const [d, userId] of userIds.entries()) {
      const texts = received
        .map((r) => r.json as { message: string; user: { id: string } })
        .filter((p) => p.user.id === String(userId))
        .map((p) => p.message);
      expect(texts).to.deep.equal(Array.from({ length: perDevice }, (_, i) => `device ${d} message ${i}`));
    }
  });

  it('fails only the message that cannot be written, whether refused or broken', async () => {
    const widgets = Array.from({ length: 4 }, () => new Widget(t.account));
    for (const widget of widgets) await widget.register();
    const good = await Promise.all(widgets.map((w, i) => clientMessage(t, w, `good ${i}`)));
    const refused: ClientMessage = { ...good[0]!, input: { ...good[0]!.input, media: { id: '00000000-0000-4000-8000-000000000000' } } };
    // A user erased since its sender read it: refused, found only under the batch's locks.
    const erased: ClientMessage = { ...good[2]!, user: { ...good[2]!.user, id: 2_000_000_000 } };
    // A device that does not exist: the insert breaks the whole transaction, then each message is tried alone.
    const broken: ClientMessage = { ...good[1]!, device: { ...good[1]!.device!, id: 2_000_000_000 } };
    const writer = sharedServer().deps.messages;
    // Handed in within one turn of the event loop: one batch.
    const outcomes = await Promise.allSettled([refused, erased, ...good, broken].map((m) => writer.send(m)));

    const [first, gone, ...rest] = outcomes;
    const last = rest.pop();
    expect(gone?.status).to.equal('rejected');
    expect((gone as PromiseRejectedResult).reason)
      .to.be.instanceOf(AppError)
      .and.include({ code: 'user_not_found' });
    expect(first?.status).to.equal('rejected');
    expect((first as PromiseRejectedResult).reason)
      .to.be.instanceOf(AppError)
      .and.include({ code: 'media_not_found' });
    expect(last?.status).to.equal('rejected');
    expect((last as PromiseRejectedResult).reason).to.not.be.instanceOf(AppError);
    expect(rest.map((o) => o.status)).to.deep.equal(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);

    const em = sharedServer().deps.db.orm.em.fork();
    const stored = await em.find(MessageSchema, { userId: good.map((m) => m.user.id) }, { orderBy: { id: 'asc' } });
    expect(stored.map((m) => m.message)).to.have.members(['good 0', 'good 1', 'good 2', 'good 3']);
    expect(await em.count(DeliverySchema, { serviceId: t.service.id, kind: 'message' })).to.equal(4);
  });

  it('writes a message whose conversation was merged while it waited into the registered conversation', async () => {
    const widget = new Widget(t.account);
    const anonymousId = (await widget.register()).body.data.userId;
    // The call read its conversation, then the customer logged in on the same device.
    const stale = await clientMessage(t, widget, 'sent just before the login');
    widget.signIn('customer-group-commit');
    const registeredId = (await widget.register()).body.data.userId;
    expect(registeredId).to.not.equal(anonymousId);

    const { message, prevId } = await sharedServer().deps.messages.send(stale);
    expect(message.userId).to.equal(registeredId);
    expect(prevId).to.equal(null);

    const em = sharedServer().deps.db.orm.em.fork();
    expect(await em.count(MessageSchema, { userId: anonymousId })).to.equal(0);
    const delivered = () =>
      t.receiver.requests
        .map((r) => r.json as { message?: string; user?: { id: string } })
        .find((p) => p.message === 'sent just before the login');
    for (let i = 0; i < 100 && !delivered(); i++) await new Promise((r) => setTimeout(r, 100));
    expect(delivered()?.user?.id).to.equal(String(registeredId));
  });
});

describe('group commit of agent messages', function () {
  this.timeout(60_000);
  let t: Tenant;
  const sockets: WidgetSocket[] = [];

  beforeEach(async () => {
    t = await tenant();
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await t.receiver.close();
  });

  const agents = [
    { id: 1, name: 'Ada' },
    { id: 2, name: 'Grace' },
  ];

  it('shares transactions between concurrent agents, and pushes `agent` exactly when the current agent changes', async () => {
    const conversations = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const widget = new Widget(t.account);
        const userId = (await widget.register()).body.data.userId;
        const socket = new WidgetSocket(widget);
        sockets.push(socket);
        await socket.connected();
        return { userId, socket };
      }),
    );
    const before = await batchesSoFar('agent');
    const api = client(sharedServer().url);
    // Per conversation, two agents answer at once, each message after its previous one.
    const perAgent = 6;
    await Promise.all(
      conversations.flatMap(({ userId }) =>
        agents.map(async (agent) => {
          for (let i = 0; i < perAgent; i++) {
            const sent = await api.post(`/users/${userId}/messages`, {
              token: t.service.apiKey,
              json: { message: `${agent.name} ${i}`, agent },
            });
            expect(sent.status, sent.text).to.equal(201);
          }
        }),
      ),
    );
    const total = conversations.length * agents.length * perAgent;
    const after = await batchesSoFar('agent');
    expect(after.sum - before.sum).to.equal(total);
    expect(after.count - before.count).to.be.below(total);

    const em = sharedServer().deps.db.orm.em.fork();
    for (const { userId, socket } of conversations) {
      const rows = await em.find(MessageSchema, { userId }, { orderBy: { id: 'asc' } });
      for (const agent of agents) {
        expect(rows.filter((m) => m.agent?.id === agent.id).map((m) => m.message)).to.deep.equal(
          Array.from({ length: perAgent }, (_, i) => `${agent.name} ${i}`),
        );
      }
      // In id order, each message whose agent differs from the one before it changed the current agent.
      const changes = rows.map((m) => m.agent?.id).filter((id, i, ids) => i === 0 || id !== ids[i - 1]);
      await socket.waitFor('message', rows.length);
      // Typing is pushed after everything sent before it: an `agent` still to come would precede it.
      await api.post(`/users/${userId}/typing`, { token: t.service.apiKey, json: { isTyping: true, agent: agents[0] } });
      await socket.waitFor('agentTyping', 1);
      const pushed = socket.events('agent').map((p) => (p as { agent: { id: number } }).agent.id);
      expect(pushed).to.deep.equal(changes);
      const page = await api.get<unknown[]>(`/users/${userId}/messages`, { token: t.service.apiKey });
      const current = (page.body as unknown as { agent: { id: number } }).agent;
      expect(current.id).to.equal(rows.at(-1)?.agent?.id);
    }
  });

  it("refuses alone a message to a merged conversation, with a foreign upload, or to another account's user", async () => {
    const merged = new Widget(t.account);
    const anonymousId = (await merged.register()).body.data.userId;
    merged.signIn('customer-agent-group-commit');
    const registeredId = (await merged.register()).body.data.userId;
    const others = await Promise.all(
      [1, 2].map(async () => {
        const widget = new Widget(t.account);
        return (await widget.register()).body.data.userId;
      }),
    );
    const input = (userId: number, text: string): AgentMessageInput => ({
      accountId: t.account.id,
      userId,
      agent: { ...agents[0]!, avatar: null },
      typeId: 2,
      text,
      media: null,
    });
    const elsewhere = await createAccount();
    const writer = sharedServer().deps.agentMessages;
    // Handed in within one turn of the event loop: one batch.
    const outcomes = await Promise.allSettled([
      writer.send(input(others[0]!, 'good 0')),
      writer.send(input(anonymousId, 'to the tombstone')),
      writer.send({ ...input(others[1]!, 'foreign upload'), media: { id: '00000000-0000-4000-8000-000000000000' } }),
      writer.send(input(others[1]!, 'good 1')),
      writer.send({ ...input(others[1]!, 'from another account'), accountId: elsewhere.id }),
    ]);
    expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'rejected', 'fulfilled', 'rejected']);
    expect((outcomes[1] as PromiseRejectedResult).reason)
      .to.be.instanceOf(AppError)
      .and.include({ code: 'user_merged' });
    expect(((outcomes[1] as PromiseRejectedResult).reason as AppError).data).to.deep.equal({ userId: registeredId });
    expect((outcomes[2] as PromiseRejectedResult).reason)
      .to.be.instanceOf(AppError)
      .and.include({ code: 'media_not_found' });
    expect((outcomes[4] as PromiseRejectedResult).reason)
      .to.be.instanceOf(AppError)
      .and.include({ code: 'user_not_found' });

    const em = sharedServer().deps.db.orm.em.fork();
    const stored = await em.find(MessageSchema, { userId: [anonymousId, registeredId, ...others], typeId: 2 }, { orderBy: { id: 'asc' } });
    expect(stored.map((m) => m.message)).to.deep.equal(['good 0', 'good 1']);
  });
});
