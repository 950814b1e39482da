// One socket's stream of messages (src/realtime/feed.ts), driven directly: notifications are
// offered the way the gateway offers them, sends go to a sink, and reads go to the shared test
// server's database, where the messages are written by the real writers. Each message is sent
// once, in id order; a gap (a lost or late notification) is filled by reading the database.
import { expect } from 'chai';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { NewMessage } from '../src/conversations/messages.ts';
import { AccountSchema, DeviceSchema, UserSchema, type Message } from '../src/db/entities/index.ts';
import { SocketFeed, type FeedOutlet, type FeedSocket } from '../src/realtime/feed.ts';
import { createAccount, createService, type AccountData } from './support/factories.ts';
import { sharedServer } from './support/server.ts';
import { Widget } from './support/widget.ts';

/** What the gateway would send to the socket, and how often the feed read the database. */
class Sink implements FeedOutlet<FeedSocket> {
  readonly sent: number[] = [];
  readonly errors: unknown[] = [];
  reads = 0;

  em = (): EntityManager => {
    this.reads += 1;
    return sharedServer().deps.db.orm.em.fork();
  };

  send(_socket: FeedSocket, message: Message): void {
    this.sent.push(message.id);
  }

  onError(err: unknown): void {
    this.errors.push(err);
  }

  async waitForSent(count: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (this.sent.length < count) {
      if (Date.now() > deadline) throw new Error(`${this.sent.length} of ${count} messages sent`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

/** A socket's feed as the gateway drives it: a notification the feed takes is sent by the caller. */
function feedOf(socket: FeedSocket, sink: Sink, lastSent: number) {
  const feed = new SocketFeed(socket, sink, lastSent);
  return {
    feed,
    offer: ({ message, prevId }: NewMessage): boolean => {
      const taken = feed.take(message, prevId);
      if (taken) sink.send(socket, message);
      return taken;
    },
  };
}

interface Conversation {
  userId: number;
  /** The id of the device of the conversation's widget. */
  deviceId: number;
  /** A message from the widget's device. */
  say(text: string): Promise<NewMessage>;
  /** A message from an agent. */
  answer(text: string): Promise<NewMessage>;
}

async function conversation(account: AccountData): Promise<Conversation> {
  const widget = new Widget(account);
  const registered = await widget.register();
  expect(registered.status, registered.text).to.equal(200);
  const userId = registered.body.data.userId;
  const em = sharedServer().deps.db.orm.em.fork();
  const device = await em.findOneOrFail(DeviceSchema, { accountId: account.id, uniqueAppDeviceId: widget.deviceId });
  const accountRow = await em.findOneOrFail(AccountSchema, { id: account.id });
  const user = await em.findOneOrFail(UserSchema, { id: userId });
  const { messages, agentMessages } = sharedServer().deps;
  return {
    userId,
    deviceId: device.id,
    say: (text) => messages.send({ account: accountRow, user, device, input: { typeId: 1, text, media: null, requestUrl: null } }),
    answer: (text) =>
      agentMessages.send({ accountId: account.id, userId, agent: { id: 1, name: 'Ada', avatar: null }, typeId: 2, text, media: null }),
  };
}

const ids = (messages: NewMessage[]) => messages.map((m) => m.message.id);

describe('socket feed', function () {
  this.timeout(30_000);
  let account: AccountData;

  before(async () => {
    account = await createAccount();
    // No webhook: the messages written here cause no deliveries.
    await createService(account.id, { name: 'Silent', webhookUrl: null });
  });

  it('sends the messages that continue it straight on, in order, without reading; its own are counted, not sent', async () => {
    const a = await conversation(account);
    const before = await a.answer('before the socket connected');
    const written = [await a.answer('one'), await a.say('two, from this device'), await a.answer('three')];
    const sink = new Sink();
    const { feed, offer } = feedOf({ data: { deviceId: a.deviceId, userId: a.userId } }, sink, before.message.id);

    expect(written.map(offer)).to.deep.equal([true, false, true]);
    expect(sink.sent).to.deep.equal([written[0]!.message.id, written[2]!.message.id]);
    expect(feed.lastSent).to.equal(written[2]!.message.id);
    expect(sink.reads).to.equal(0);

    // From another device of the conversation, the socket's own message is sent too.
    const sink2 = new Sink();
    const other = feedOf({ data: { deviceId: -1, userId: a.userId } }, sink2, before.message.id);
    for (const message of written) other.offer(message);
    expect(sink2.sent).to.deep.equal(ids(written));
  });

  it("continues a new conversation's socket (it has nothing: 0) with the conversation's first messages, without reading", async () => {
    const a = await conversation(account);
    const sink = new Sink();
    const { feed, offer } = feedOf({ data: { deviceId: -1, userId: a.userId } }, sink, 0);
    const first = await a.say('the first message of the conversation');
    expect(first.prevId).to.equal(null);
    const second = await a.answer('its answer');
    expect([first, second].map(offer)).to.deep.equal([true, true]);
    expect(sink.sent).to.deep.equal(ids([first, second]));
    expect(feed.lastSent).to.equal(second.message.id);
    expect(sink.reads).to.equal(0);

    // A socket that has nothing of a conversation with messages still reads them all first.
    const late = new Sink();
    const behind = feedOf({ data: { deviceId: -1, userId: a.userId } }, late, 0);
    const third = await a.answer('third');
    expect(behind.offer(third)).to.equal(false);
    await late.waitForSent(3);
    expect(late.sent).to.deep.equal(ids([first, second, third]));
    expect(late.reads).to.be.greaterThan(0);
  });

  it('drops duplicates, whether notified twice or already read from the database', async () => {
    const a = await conversation(account);
    const before = await a.answer('before');
    const [m1, m2, m3] = [await a.answer('one'), await a.answer('two'), await a.answer('three')] as [NewMessage, NewMessage, NewMessage];
    const sink = new Sink();
    const { feed, offer } = feedOf({ data: { deviceId: -1, userId: a.userId } }, sink, before.message.id);

    expect([m1, m1, m2, m1, m2, m3, m3].map(offer)).to.deep.equal([true, false, true, false, false, true, false]);
    expect(sink.sent).to.deep.equal(ids([m1, m2, m3]));

    // A read after them finds nothing new to send.
    await feed.pull();
    expect(sink.reads).to.equal(1);
    expect(sink.sent).to.deep.equal(ids([m1, m2, m3]));
    expect(sink.errors).to.deep.equal([]);
  });

  it('fills a gap by reading the database: in order, each once, late notifications dropped', async () => {
    const a = await conversation(account);
    const before = await a.answer('before');
    const [m1, m2, m3, m4] = [await a.answer('1'), await a.say('2'), await a.answer('3'), await a.answer('4')] as [
      NewMessage,
      NewMessage,
      NewMessage,
      NewMessage,
    ];
    const sink = new Sink();
    const { feed, offer } = feedOf({ data: { deviceId: -1, userId: a.userId } }, sink, before.message.id);

    // The notifications of 1 and 2 are lost (or still on their way): 3 does not continue the feed.
    expect(offer(m3)).to.equal(false);
    expect(sink.reads, 'a read started at once').to.equal(1);
    // 4 continues 3, but 3 is not sent yet: it waits for the read rather than overtaking it.
    expect(offer(m4)).to.equal(false);
    await sink.waitForSent(4);
    expect(sink.sent).to.deep.equal(ids([m1, m2, m3, m4]));

    // The late notifications change nothing.
    expect([m1, m2, m3, m4].map(offer)).to.deep.equal([false, false, false, false]);
    await feed.pull();
    // The read, one more for the notification that came during it, and the one just asked for.
    expect(sink.reads).to.equal(3);
    expect(sink.sent).to.deep.equal(ids([m1, m2, m3, m4]));

    // Caught up, the next message goes straight on again.
    const m5 = await a.answer('5');
    expect(offer(m5)).to.equal(true);
    expect(sink.sent).to.deep.equal(ids([m1, m2, m3, m4, m5]));
    expect(sink.errors).to.deep.equal([]);
  });

  it('reads a gap longer than one read in several, in order', async () => {
    const a = await conversation(account);
    const before = await a.answer('before');
    // More than one read's worth (200), handed in together: group-committed, ids in this order.
    const written = await Promise.all(Array.from({ length: 230 }, (_, i) => a.answer(`message ${i}`)));
    const sink = new Sink();
    const { offer } = feedOf({ data: { deviceId: -1, userId: a.userId } }, sink, before.message.id);

    const newest = written.reduce((x, y) => (y.message.id > x.message.id ? y : x));
    expect(offer(newest)).to.equal(false);
    await sink.waitForSent(written.length);
    expect(sink.sent).to.deep.equal([...ids(written)].sort((x, y) => x - y));
    expect(sink.reads).to.equal(2);
  });

  it('ignores messages of other users, notified or read', async () => {
    const a = await conversation(account);
    const b = await conversation(account);
    const a0 = await a.answer('a0');
    // Interleaved: B's ids fall between A's.
    const a1 = await a.answer('a1');
    const b1 = await b.say('b1');
    const a2 = await a.say('a2');
    const b2 = await b.answer('b2');
    const a3 = await a.answer('a3');
    expect(b1.message.id).to.be.within(a1.message.id, a2.message.id);
    const sink = new Sink();
    const { feed, offer } = feedOf({ data: { deviceId: -1, userId: a.userId } }, sink, a0.message.id);

    // B's message reaches A's feed: it never continues it (its previous message is B's), so the
    // feed reads its own conversation instead, which has only A's messages.
    expect(offer(b1)).to.equal(false);
    await sink.waitForSent(3);
    expect(offer(b2)).to.equal(false);
    const b3 = await b.answer('b3');
    expect(offer(b3)).to.equal(false);
    await feed.pull();
    expect(sink.sent).to.deep.equal(ids([a1, a2, a3]));

    // Nor does another user's first message (no previous one) continue a feed with nothing sent yet.
    const empty = await conversation(account);
    const emptySink = new Sink();
    const fresh = feedOf({ data: { deviceId: -1, userId: empty.userId } }, emptySink, 0);
    const c = await conversation(account);
    const c1 = await c.answer('c1');
    expect(c1.prevId).to.equal(null);
    expect(fresh.offer(c1)).to.equal(false);
    await fresh.feed.pull();
    expect(emptySink.sent).to.deep.equal([]);
    expect([...sink.errors, ...emptySink.errors]).to.deep.equal([]);
  });
});
