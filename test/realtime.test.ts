// The Socket.IO gateway with real socket.io-client connections: handshake like REST, the same
// commands and answers as REST, live pushes, catch-up, reconnect storms, merges.
import { expect } from 'chai';
import { MessageSchema } from '../src/db/entities/index.ts';
import { startDemoBot } from '../scripts/demo-bot-service.ts';
import { adminToken, createAccount, createService } from './support/factories.ts';
import { client } from './support/http.ts';
import { sharedServer } from './support/server.ts';
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
        expect(Object.keys(ack.data ?? {})).to.deep.equal(Object.keys((rest.body.data) ?? {}));
        if (row.code) expect(ack.notifications[0]?.message).to.equal(row.code);

        const em = sharedServer().deps.db.orm.em.fork();
        const stored = async (widget: Widget) => {
          const user = (await widget.register()).body.data.userId;
          return (await em.find(MessageSchema, { userId: user })).map((m) => [m.typeId, m.message]);
        };
        expect(await stored(socketWidget)).to.deep.equal(await stored(restWidget));
        if (row.ok) {
          const delivered = await t.receiver.waitFor(2);
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
      const requests = await t.receiver.waitFor(3);
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

      const sent = await agentSays(userId, 'Good morning');
      expect(sent.status).to.equal(201);
      for (const socket of [a, b]) {
        const [message] = await socket.waitFor('message', 1);
        expect(message).to.deep.include({ id: sent.body.data.id, message: 'Good morning', typeId: 2 });
        const [agent] = await socket.waitFor('agent', 1);
        expect(agent).to.deep.equal({ agent: { id: 9, name: 'Grace', avatar: null, isTyping: null } });
      }
      // The same agent again: the message, but no second `agent` (it did not change).
      await agentSays(userId, 'How can I help?');
      await a.waitFor('message', 2);

      await client(sharedServer().url).post(`/users/${userId}/typing`, {
        token: t.service.apiKey,
        json: { isTyping: true, agent: { id: 9, name: 'Grace' } },
      });
      const [typing] = await a.waitFor('agentTyping', 1);
      expect(typing).to.deep.include({ isTyping: true });
      // Pushed after the second message: an `agent` for that message would have come before.
      expect(a.events('agent')).to.have.length(1);
      await client(sharedServer().url).put(`/users/${userId}/agent/unset`, { token: t.service.apiKey });
      const agents = await b.waitFor('agent', 2);
      expect(agents[1]).to.deep.equal({ agent: null });
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
      const [pushed] = await onLaptop.waitFor('message', 1);
      expect(pushed).to.deep.include({ message: 'sent from the phone', typeId: 1 });
      await agentSays((await phone.register()).body.data.userId, 'after');
      await fromPhone.waitFor('message', 1);
      expect(fromPhone.messages().map((m) => m.message)).to.deep.equal(['after']);
    });

    it('marking messages seen is pushed as messageStatus', async () => {
      const widget = new Widget(t.account);
      const userId = (await widget.register()).body.data.userId;
      const socket = await open(widget);
      const sent = await agentSays(userId, 'read me');
      await widget.call('PUT', '/messages/status/4', { json: { messageIds: [sent.body.data.id] } });
      const [status] = await socket.waitFor('messageStatus', 1);
      expect(status).to.deep.equal({ messages: [{ id: sent.body.data.id, status: 4 }] });
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
      await socket.waitFor('message', 3);
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
      await socket.waitFor('message', 1000, 60_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(socket.messages().map((m) => m.id)).to.deep.equal(sent);
    });
  });

  it('moves the sockets of a merged anonymous user to the registered user', async () => {
    const widget = new Widget(t.account);
    await widget.register();
    const socket = await open(widget);
    widget.signIn('customer-after-merge');
    const registeredId = (await widget.register()).body.data.userId;
    const [merged] = await socket.waitFor('merged', 1);
    expect(merged).to.deep.equal({ userId: registeredId });
    await agentSays(registeredId, 'welcome back');
    const [message] = await socket.waitFor('message', 1);
    expect(message).to.deep.include({ message: 'welcome back' });
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
      const [reply] = await socket.waitFor('message', 1);
      expect(reply).to.deep.include({ message: 'You said: “Is anybody there?”', typeId: 2 });
      expect(reply?.agent).to.deep.include({ name: 'Demo bot' });
    } finally {
      bot.server.close();
    }
  });

  it('limits a flooding socket without harming others', async () => {
    const server = sharedServer();
    const widget = new Widget(t.account, newDeviceId());
    await widget.register();
    const quiet = new Widget(t.account);
    await quiet.register();
    const noisy = await open(widget);
    const calm = await open(quiet);
    const points = server.config.client.rateLimit.points;
    const answers = await Promise.all(Array.from({ length: points + 5 }, (_, i) => noisy.emit('chatOpened', { i })));
    const refused = answers.filter((a) => a.status === 'ERROR');
    expect(refused.length).to.be.at.least(5);
    expect(refused[0]?.notifications[0]?.message).to.equal('too_many_requests');
    expect((await calm.emit('message', { message: 'unaffected' })).status).to.equal('SUCCESS');
    expect(noisy.socket.connected, 'refused events do not drop the socket').to.equal(true);
  });
});
