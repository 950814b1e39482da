// The Socket.IO gateway with real socket.io-client connections: handshake like REST, the same
// commands and answers as REST, live pushes, catch-up, reconnect storms, merges.
import { expect } from 'chai';
import { MessageSchema } from '../src/db/entities/index.ts';
import { replyTo, startDemoBot } from '../scripts/demo-bot-service.ts';
import { adminToken, createAccount, createService, type AccountData } from './support/factories.ts';
import { client } from './support/http.ts';
import { expectOutbox, outboxRows, receivedExactly } from './support/outbox.ts';
import { freePort } from './support/redis.ts';
import { TEST_ADMIN, sharedServer, startTestServer } from './support/server.ts';
import { WidgetSocket } from './support/sockets.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget, authFor, newDeviceId } from './support/widget.ts';

describe('real-time gateway', function () {
  this.timeout(60_000);
  let t: Tenant;
  const sockets: WidgetSocket[] = [];

  const open = async (widget: Widget, options: { lastMessageId?: number } = {}) => {
    const socket = new WidgetSocket(widget, options);
    sockets.push(socket);
    await socket.connected();
    return socket;
  };
  const agentSays = (userId: number, message: string) =>
    client(sharedServer().url).post<{ id: number }>(`/users/${userId}/messages`, {
      token: t.service.apiKey,
      json: { message, agent: { id: 9, name: 'Grace' } },
    });

  beforeEach(async () => {
    t = await tenant();
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await t.receiver.close();
  });

  describe('handshake', () => {
    it('refuses what REST refuses, with the same code', async () => {
      const registered = new Widget(t.account).signIn('customer-socket');
      await registered.register();
      const cases: Array<[Widget, string]> = [
        [new Widget({ ...t.account, identification: 'noSuchAccount00' }), 'account_not_found'],
        [new Widget(t.account, 'short'), 'invalid_device_id'],
        [new Widget(t.account), 'device_not_found'],
        [new Widget(t.account, registered.deviceId), 'authorization_required'],
        [new Widget(t.account, registered.deviceId, 'forged'), 'invalid_authorization'],
        [new Widget(t.account, registered.deviceId, authFor(t.account, 'someone-else')), 'authorization_mismatch'],
      ];
      for (const [widget, code] of cases) {
        const socket = new WidgetSocket(widget);
        sockets.push(socket);
        const err = await socket.connected().then(
          () => null,
          (e: Error & { data?: { code: string } }) => e,
        );
        expect(err?.message, code).to.equal(code);
        expect(err?.data?.code).to.equal(code);
      }
      expect((await open(registered)).socket.connected).to.equal(true);
    });
  });

  describe('the same calls as REST', () => {
    // One table, both transports: same answers, same stored records, same deliveries.
    const table: Array<{ name: string; body: Record<string, unknown>; ok: boolean; code?: string }> = [
      { name: 'text', body: { message: 'hello' }, ok: true },
      { name: 'client system message', body: { message: 'logged_in', typeId: 4 }, ok: true },
      { name: 'agent typeId', body: { message: 'x', typeId: 2 }, ok: false, code: 'validation_failed' },
      { name: 'empty', body: {}, ok: false, code: 'validation_failed' },
      { name: 'unknown upload', body: { media: { id: '00000000-0000-4000-8000-000000000000' } }, ok: false, code: 'media_not_found' },
    ];

    for (const row of table) {
      it(`message: ${row.name}`, async () => {
        const restWidget = new Widget(t.account);
        await restWidget.register();
        const socketWidget = new Widget(t.account);
        await socketWidget.register();
        const socket = await open(socketWidget);

        const rest = await restWidget.send(row.body);
        const ack = await socket.emit('message', row.body);
        expect(ack.status).to.equal(rest.body.status);
        expect(ack.notifications.map((n) => n.message)).to.deep.equal(rest.body.notifications.map((n) => n.message));
        expect(ack.metadata).to.deep.include({ values: { url: 'messages' }, method: 'post' });
        expect(Object.keys(ack.data ?? {})).to.deep.equal(Object.keys(rest.body.data ?? {}));
        if (row.code) expect(ack.notifications[0]?.message).to.equal(row.code);

        const em = sharedServer().deps.db.orm.em.fork();
        const stored = async (widget: Widget) => {
          const user = (await widget.register()).body.data.userId;
          return (await em.find(MessageSchema, { userId: user })).map((m) => [m.typeId, m.message]);
        };
        expect(await stored(socketWidget)).to.deep.equal(await stored(restWidget));
        // The sender's own socket is not sent its own message, nor anything else.
        await socket.expectExactly({});
        if (!row.ok) {
          // Read right after both answers: a refused message enqueues nothing, on either transport.
          await expectOutbox({ serviceId: t.service.id }, 0, 'deliveries of refused messages');
        } else {
          const delivered = await receivedExactly(t.receiver, t.service.id, 2);
          const strip = (body: unknown) => {
            const { id, time, user, ...rest } = body as Record<string, unknown>;
            return rest;
          };
          expect(strip(delivered[1]?.json)).to.deep.equal(strip(delivered[0]?.json));
        }
      });
    }

    it('events: startTyping, stopTyping, chatOpened, acknowledged and delivered as over REST', async () => {
      const widget = new Widget(t.account);
      const userId = (await widget.register()).body.data.userId;
      const socket = await open(widget);
      for (const name of ['startTyping', 'stopTyping', 'chatOpened']) {
        const ack = await socket.emit(name);
        expect(ack.status, name).to.equal('SUCCESS');
      }
      await socket.expectExactly({});
      const requests = await receivedExactly(t.receiver, t.service.id, 3);
      expect(requests.map((r) => (r.json as { body: { name: string; user: { id: string } } }).body.name)).to.deep.equal([
        'startTyping',
        'stopTyping',
        'chatOpened',
      ]);
      expect((requests[0]?.json as { body: { user: { id: string } } }).body.user.id).to.equal(String(userId));
    });
  });

  describe('pushes', () => {
    it('an agent message reaches every connected device of a registered user, with the agent', async () => {
      const phone = new Widget(t.account).signIn('customer-two-devices');
      const userId = (await phone.register()).body.data.userId;
      const laptop = new Widget(t.account).signIn('customer-two-devices');
      await laptop.register();
      const a = await open(phone);
      const b = await open(laptop);
      // What registering announced (a registered user's system message); the agent adds nothing.
      const announced = (await outboxRows({ serviceId: t.service.id, userId })).length;

      const sent = await agentSays(userId, 'Good morning');
      expect(sent.status).to.equal(201);
      for (const socket of [a, b]) {
        await socket.expectExactly({ message: 1, agent: 1 });
        expect(socket.messages()[0]).to.deep.include({ id: sent.body.data.id, message: 'Good morning', typeId: 2 });
        expect(socket.events('agent')[0]).to.deep.equal({ agent: { id: 9, name: 'Grace', avatar: null, isTyping: null } });
      }
      // The same agent again: the message, but no second `agent` (it did not change).
      await agentSays(userId, 'How can I help?');
      for (const socket of [a, b]) await socket.expectExactly({ message: 2, agent: 1 });

      await client(sharedServer().url).post(`/users/${userId}/typing`, {
        token: t.service.apiKey,
        json: { isTyping: true, agent: { id: 9, name: 'Grace' } },
      });
      for (const socket of [a, b]) await socket.expectExactly({ message: 2, agent: 1, agentTyping: 1 });
      expect(a.events('agentTyping')[0]).to.deep.include({ isTyping: true });
      await client(sharedServer().url).put(`/users/${userId}/agent/unset`, { token: t.service.apiKey });
      for (const socket of [a, b]) {
        await socket.expectExactly({ message: 2, agent: 2, agentTyping: 1 });
        expect(socket.events('agent')[1]).to.deep.equal({ agent: null });
      }
      // None of it is announced to the Service: agent messages, typing and unset are its own doing.
      await expectOutbox({ serviceId: t.service.id, userId }, announced, 'deliveries after the agent’s doings');
    });

    it("a user's own message reaches the user's other devices, not the sending one", async () => {
      const phone = new Widget(t.account).signIn('customer-echo');
      await phone.register();
      const laptop = new Widget(t.account).signIn('customer-echo');
      await laptop.register();
      const fromPhone = await open(phone);
      const onLaptop = await open(laptop);
      const ack = await fromPhone.emit('message', { message: 'sent from the phone' });
      expect(ack.status).to.equal('SUCCESS');
      await onLaptop.expectExactly({ message: 1 });
      expect(onLaptop.messages()[0]).to.deep.include({ message: 'sent from the phone', typeId: 1 });
      await fromPhone.expectExactly({});
      await agentSays((await phone.register()).body.data.userId, 'after');
      await fromPhone.expectExactly({ message: 1, agent: 1 });
      expect(fromPhone.messages().map((m) => m.message)).to.deep.equal(['after']);
      await onLaptop.expectExactly({ message: 2, agent: 1 });
    });

    it('test harness: expectExactly fails on a push more than expected, of the same event or another', async () => {
      const widget = new Widget(t.account);
      const userId = (await widget.register()).body.data.userId;
      const socket = await open(widget);
      await agentSays(userId, 'one');
      await agentSays(userId, 'two');
      // waitFor('message', 1) alone passes here: it only waits for at least one.
      await socket.waitFor('message', 1);
      const fewerThanPushed: Array<Record<string, number>> = [{ message: 1, agent: 1 }, { message: 2 }];
      for (const fewer of fewerThanPushed) {
        const err = await socket.expectExactly(fewer).catch((e: Error) => e);
        expect(err, JSON.stringify(fewer)).to.be.instanceOf(Error);
      }
      const err = await socket.waitForExactly('message', 1).catch((e: Error) => e);
      expect(err).to.be.instanceOf(Error);
      await socket.expectExactly({ message: 2, agent: 1 });
    });

    it('marking messages seen is pushed as messageStatus', async () => {
      const widget = new Widget(t.account);
      const userId = (await widget.register()).body.data.userId;
      const socket = await open(widget);
      const sent = await agentSays(userId, 'read me');
      await widget.call('PUT', '/messages/status/4', { json: { messageIds: [sent.body.data.id] } });
      await socket.expectExactly({ message: 1, agent: 1, messageStatus: 1 });
      expect(socket.events('messageStatus')[0]).to.deep.equal({ messages: [{ id: sent.body.data.id, status: 4 }] });
    });
  });

  describe('no loss across drops', () => {
    it('catches up from lastMessageId, in order, before live messages', async () => {
      const widget = new Widget(t.account);
      const userId = (await widget.register()).body.data.userId;
      const first = await agentSays(userId, 'one');
      await agentSays(userId, 'two');
      await agentSays(userId, 'three');
      const socket = await open(widget, { lastMessageId: first.body.data.id });
      await agentSays(userId, 'four');
      // Caught up, then live; the agent did not change, so no `agent` push.
      await socket.expectExactly({ message: 3 });
      expect(socket.messages().map((m) => m.message)).to.deep.equal(['two', 'three', 'four']);
    });

    it('ends with all 1,000 agent messages, each once, in order, through reconnects every few hundred ms', async function () {
      this.timeout(180_000);
      const widget = new Widget(t.account);
      const userId = (await widget.register()).body.data.userId;
      const socket = await open(widget, { lastMessageId: 0 });
      let sending = true;
      const storm = (async () => {
        while (sending) {
          await new Promise((r) => setTimeout(r, 150 + Math.random() * 200));
          await socket.reconnect();
        }
      })();
      const sent: number[] = [];
      for (let i = 1; i <= 1000; i++) sent.push((await agentSays(userId, `m${i}`)).body.data.id);
      sending = false;
      await storm;
      // Each once: a repeat the server sent before answering the round trip would be a 1,001st.
      // (How many `agent` pushes arrived depends on whether the socket was connected then.)
      await socket.waitForExactly('message', 1000, 60_000);
      expect(socket.messages().map((m) => m.id)).to.deep.equal(sent);
    });
  });

  it('at a merge, moves only the sockets that presented the customer’s header; the others are told the REST code and disconnected', async () => {
    const widget = new Widget(t.account);
    await widget.register();
    // Three sockets of the one anonymous device: its id alone, another customer's header, the merging customer's.
    const deviceOnly = await open(widget);
    const otherCustomer = await open(new Widget(t.account, widget.deviceId, authFor(t.account, 'someone-else')));
    widget.signIn('customer-after-merge');
    const withHeader = await open(widget);
    const ended = [deviceOnly, otherCustomer].map(
      (s) =>
        new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('not disconnected at the merge')), 10_000);
          s.socket.once('disconnect', (why: string) => (clearTimeout(timer), resolve(why)));
        }),
    );
    const registeredId = (await widget.register()).body.data.userId;

    expect(await Promise.all(ended), 'ended by the server: no reconnection of their own').to.deep.equal([
      'io server disconnect',
      'io server disconnect',
    ]);
    expect(deviceOnly.pushed).to.deep.equal([{ event: 'unauthorized', payload: { code: 'authorization_required' } }]);
    expect(otherCustomer.pushed).to.deep.equal([{ event: 'unauthorized', payload: { code: 'authorization_mismatch' } }]);
    await withHeader.expectExactly({ merged: 1 });
    expect(withHeader.events('merged')[0]).to.deep.equal({ userId: registeredId });
    await agentSays(registeredId, 'welcome back');
    await withHeader.expectExactly({ merged: 1, message: 1, agent: 1 });
    expect(withHeader.messages()[0]).to.deep.include({ message: 'welcome back' });
    expect(deviceOnly.messages(), 'the customer’s messages never reach a device id alone').to.deep.equal([]);
    // The moved socket is the customer's: its caller is identified again, with its header.
    expect((await withHeader.emit('message', { message: 'as the customer' })).status).to.equal('SUCCESS');
    // And what REST answers the device id alone is what the disconnected socket was told.
    expect((await new Widget(t.account, widget.deviceId).messages()).body.notifications[0]?.message).to.equal('authorization_required');
  });

  it('identifies the caller again once its device moves to another customer: its next event is refused as over REST', async () => {
    const first = new Widget(t.account).signIn('customer-first');
    await first.register();
    const socket = await open(first);
    expect((await socket.emit('message', { message: 'as the first customer' })).status).to.equal('SUCCESS');
    await new Widget(t.account, first.deviceId).signIn('customer-second').register();
    const ack = await socket.emit('message', { message: 'still the first customer?' });
    expect(ack.notifications[0]?.message).to.equal('authorization_mismatch');
    expect((await first.send('over REST')).body.notifications[0]?.message).to.equal('authorization_mismatch');
  });

  it("identifies the caller again at once when its account changes: new allowed origins refuse the socket's next event", async () => {
    const widget = new Widget(t.account);
    await widget.register();
    const socket = new WidgetSocket(widget, { origin: 'https://shop.example' });
    sockets.push(socket);
    await socket.connected();
    expect((await socket.emit('message', { message: 'from the shop' })).status).to.equal('SUCCESS');
    const admin = client(sharedServer().url);
    const token = await adminToken();
    const patched = await admin.patch(`/adminApi/accounts/${t.account.id}`, { token, json: { allowedOrigins: ['https://other.example'] } });
    expect(patched.status).to.equal(200);
    // Kept since its first event, the caller was dropped by the account's notice, not by its age.
    const ack = await socket.emit('message', { message: 'still allowed?' });
    expect(ack.notifications[0]?.message).to.equal('origin_not_allowed');
    await admin.patch(`/adminApi/accounts/${t.account.id}`, { token, json: { allowedOrigins: [] } });
    expect((await socket.emit('message', { message: 'allowed again' })).status).to.equal('SUCCESS');
  });

  it("keeps a caller verified during a rotated secret's grace only until the grace ends", async () => {
    const server = await startTestServer({ client: { authorizationSecretGraceSeconds: 2 } });
    const api = client(server.url);
    const token = await adminToken(server.url);
    const account = (await api.post<AccountData>('/adminApi/accounts', { token, json: { name: 'Rotating' } })).body.data;
    await api.post(`/adminApi/accounts/${account.id}/services`, { token, json: { name: 'Bot' } });
    const widget = new Widget(account, newDeviceId(), undefined, '', server.url).signIn('customer-before-rotation');
    const registered = await widget.register();
    expect(registered.status, registered.text).to.equal(200);
    const socket = new WidgetSocket(widget);
    sockets.push(socket);
    try {
      await socket.connected();
      const rotated = await api.post(`/adminApi/accounts/${account.id}/authorization-secret`, { token });
      expect(rotated.status).to.equal(200);
      // Identified again after the rotation, with the secret before, still in its grace.
      expect((await socket.emit('message', { message: 'in the grace' })).status).to.equal('SUCCESS');
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      const ack = await socket.emit('message', { message: 'after the grace' });
      expect(ack.notifications[0]?.message).to.equal('invalid_authorization');
    } finally {
      socket.close();
      await server.stop();
    }
  });

  it('holds a whole conversation with the demo bot: widget socket → webhook → Service API → socket', async () => {
    const botAccount = await createAccount();
    const placeholder = await createService(botAccount.id, { name: 'Demo bot', webhookUrl: null });
    const bot = await startDemoBot({
      palaverUrl: sharedServer().url,
      apiKey: placeholder.apiKey,
      signingSecret: placeholder.signingSecret,
      port: 0,
    });
    try {
      const token = await adminToken();
      await client(sharedServer().url).patch(`/adminApi/services/${placeholder.id}`, { token, json: { webhookUrl: `${bot.url}/` } });
      const widget = new Widget({ ...botAccount, defaultServiceId: placeholder.id });
      await widget.register();
      const socket = await open(widget);
      const ack = await socket.emit('message', { message: 'Is anybody there?' });
      expect(ack.status).to.equal('SUCCESS');
      await socket.expectExactly({ message: 1, agent: 1 });
      const [reply] = socket.messages();
      expect(reply).to.deep.include({ message: 'You said: “Is anybody there?”', typeId: 2 });
      expect(reply?.agent).to.deep.include({ name: 'Demo bot' });
    } finally {
      bot.server.close();
    }
    // Every upload is an {{img/…}} reference: a picture is told from another file by its name.
    expect(replyTo('{{img/7/2026/11/25/photo.JPG}}')).to.equal('Nice picture!');
    expect(replyTo('{{img/7/2026/11/25/notes.txt}}')).to.equal('Thanks, I got your file.');
  });

  it('has the demo bot, started after the visitor wrote, ask for the waiting delivery at once rather than at its next attempt', async () => {
    // The production schedule's second wait is minutes; here, five of them.
    const server = await startTestServer({ webhooks: { retrySchedule: [0, 300] } });
    let bot: Awaited<ReturnType<typeof startDemoBot>> | undefined;
    try {
      const api = client(server.url);
      const token = await adminToken(server.url);
      const port = await freePort();
      const account = (await api.post<AccountData>('/adminApi/accounts', { token, json: { name: 'Late bot' } })).body.data;
      const made = await api.post<{ id: number; apiKey: string; signingSecret: string }>(`/adminApi/accounts/${account.id}/services`, {
        token,
        json: { name: 'Demo bot', webhookUrl: `http://127.0.0.1:${port}/` },
      });
      const service = made.body.data;
      const widget = new Widget(account, newDeviceId(), undefined, '', server.url);
      await widget.register();
      expect((await widget.send('Hello before the bot is up')).status).to.equal(200);
      // Its first attempt finds nobody; the next one is five minutes away.
      const attempts = () =>
        server.deps.db.orm.em
          .fork()
          .getConnection()
          .execute<Array<{ state: string; attempts: number }>>('select state, attempts from deliveries where service_id = ?', [service.id]);
      let waiting: Array<{ state: string; attempts: number }> = [];
      for (let i = 0; i < 200 && !waiting.some((row) => row.attempts === 1); i++) {
        waiting = await attempts();
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(waiting).to.deep.equal([{ state: 'pending', attempts: 1 }]);

      bot = await startDemoBot({ palaverUrl: server.url, apiKey: service.apiKey, signingSecret: service.signingSecret, port });
      expect(bot.retried).to.equal(1);
      let texts: Array<string | null> = [];
      for (let i = 0; i < 200 && !texts.includes('You said: “Hello before the bot is up”'); i++) {
        texts = (await widget.messages()).body.data.map((m) => m.message);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(texts).to.include('You said: “Hello before the bot is up”');
    } finally {
      bot?.server.close();
      await server.stop();
    }
  });

  it('limits a flooding socket without harming others', async () => {
    // A server of its own with a small write limit: the suite's is generous, and a flood of a
    // thousand events only measures the machine.
    const server = await startTestServer({ client: { rateLimit: { points: 10, durationSeconds: 60 } } });
    try {
      const api = client(server.url);
      const token = (await api.post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN })).body.data.token;
      const account = (await api.post<AccountData>('/adminApi/accounts', { token, json: { name: 'Flood' } })).body.data;
      await api.post(`/adminApi/accounts/${account.id}/services`, { token, json: { name: 'S' } });
      const widget = new Widget(account, newDeviceId(), undefined, '', server.url);
      await widget.register();
      const quiet = new Widget(account, newDeviceId(), undefined, '', server.url);
      await quiet.register();
      const noisy = await open(widget);
      const calm = await open(quiet);
      const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => noisy.emit('chatOpened', { i })));
      const refused = answers.filter((a) => a.status === 'ERROR');
      // One point went to the registration, over REST: the same device, the same limit.
      expect(refused.length).to.equal(6);
      expect(refused[0]?.notifications[0]?.message).to.equal('too_many_requests');
      expect((await calm.emit('message', { message: 'unaffected' })).status).to.equal('SUCCESS');
      expect(noisy.socket.connected, 'refused events do not drop the socket').to.equal(true);
    } finally {
      await server.stop();
    }
  });
});
