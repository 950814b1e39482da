// The team inbox (docs/dashboard.md): the account's Service of kind `inbox`, how a bot hands a
// conversation over to it and takes it back, and what it refuses as a Service without a webhook.
import { expect } from 'chai';
import { io, type Socket } from 'socket.io-client';
import { adminToken, createAccount } from './support/factories.ts';
import { client } from './support/http.ts';
import { expectOutbox, outboxRows, receivedExactly } from './support/outbox.ts';
import { sharedServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';
import { WidgetSocket } from './support/sockets.ts';
import { Receiver } from './support/receiver.ts';
import { pushRows } from './support/push.ts';

interface ServiceView {
  id: number;
  identification: string;
  name: string;
  kind: string;
  webhookUrl: string | null;
  isDefault: boolean;
}

interface Overview {
  services: ServiceView[];
  inbox: ServiceView | null;
  defaultService: ServiceView | null;
}

export const api = () => client(sharedServer().url);

export async function overview(accountId: number): Promise<Overview> {
  const answer = await api().get<Overview>(`/adminApi/accounts/${accountId}`, { token: await adminToken() });
  expect(answer.status, answer.text).to.equal(200);
  return answer.body.data;
}

export interface ConversationChange {
  accountId: number;
  userId: number;
  change: string;
}

/** An operator socket on /operators, recording its `conversation` events. */
export class OperatorSocket {
  readonly changes: ConversationChange[] = [];
  readonly socket: Socket;

  constructor(token: string) {
    this.socket = io(`${sharedServer().url}/operators`, {
      path: '/socket.io',
      transports: ['websocket'],
      reconnection: false,
      auth: { token },
    });
    this.socket.on('conversation', (change: ConversationChange) => this.changes.push(change));
  }

  connected(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve());
      this.socket.once('connect_error', reject);
    });
  }

  async waitFor(userId: number, change: string, timeoutMs = 10_000): Promise<ConversationChange> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.changes.find((c) => c.userId === userId && c.change === change);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no ${change} event for user ${userId}: ${JSON.stringify(this.changes)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    this.socket.close();
  }
}

describe('team inbox: the Service', function () {
  this.timeout(30_000);

  it('comes with every new account: kind inbox, no webhook URL, no API key, not the default', async () => {
    const account = await createAccount();
    const shown = await overview(account.id);
    expect(shown.services).to.deep.equal([]);
    expect(shown.inbox).to.include({ kind: 'inbox', name: 'Team inbox', webhookUrl: null, isDefault: false });
    expect(shown.inbox?.identification).to.match(/^[A-Za-z0-9]{16}$/);
    expect(shown.defaultService).to.equal(null);
    const keys = await api().get<unknown[]>(`/adminApi/services/${shown.inbox?.id}/keys`, { token: await adminToken() });
    expect(keys.status).to.equal(200);
    expect(keys.body.data).to.deep.equal([]);
  });

  it('refuses what only a webhook Service has: 409 inbox_has_no_api_keys, inbox_has_no_webhook', async () => {
    const account = await createAccount();
    const inbox = (await overview(account.id)).inbox as ServiceView;
    const token = await adminToken();
    const key = await api().post(`/adminApi/services/${inbox.id}/keys`, { token });
    expect([key.status, key.body.notifications[0]?.message]).to.deep.equal([409, 'inbox_has_no_api_keys']);
    const url = await api().patch(`/adminApi/services/${inbox.id}`, { token, json: { webhookUrl: 'https://bot.example/hook' } });
    expect([url.status, url.body.notifications[0]?.message]).to.deep.equal([409, 'inbox_has_no_webhook']);
    const secret = await api().post(`/adminApi/services/${inbox.id}/signing-secret`, { token });
    expect([secret.status, secret.body.notifications[0]?.message]).to.deep.equal([409, 'inbox_has_no_webhook']);
    const test = await api().post(`/adminApi/services/${inbox.id}/test-event`, { token });
    expect([test.status, test.body.notifications[0]?.message]).to.deep.equal([409, 'inbox_has_no_webhook']);
    // Renaming is fine, and a second inbox cannot exist (a unique index per account).
    const renamed = await api().patch<ServiceView>(`/adminApi/services/${inbox.id}`, { token, json: { name: 'Support team' } });
    expect(renamed.status, renamed.text).to.equal(200);
    expect(renamed.body.data).to.include({ name: 'Support team', kind: 'inbox', webhookUrl: null });
  });

  it('can be the default Service of an account that has no other (humans answer everything)', async () => {
    const account = await createAccount();
    const inbox = (await overview(account.id)).inbox as ServiceView;
    const chosen = await api().put(`/adminApi/accounts/${account.id}/default-service`, {
      token: await adminToken(),
      json: { serviceIdentification: inbox.identification },
    });
    expect(chosen.status, chosen.text).to.equal(200);
    expect((await overview(account.id)).defaultService).to.include({ id: inbox.id, kind: 'inbox' });
    const widget = new Widget({ ...account, defaultServiceId: inbox.id });
    const registered = await widget.register();
    expect(registered.status, registered.text).to.equal(200);
    expect((await widget.send('hello team')).status).to.equal(200);
    expect(await outboxRows({ serviceId: inbox.id })).to.deep.equal([]);
  });
});

describe('team inbox: handover from a bot', function () {
  this.timeout(30_000);
  let t: Tenant;
  let inbox: ServiceView;
  let widget: Widget;
  let userId: number;
  let operators: OperatorSocket;

  beforeEach(async () => {
    t = await tenant();
    inbox = (await overview(t.account.id)).inbox as ServiceView;
    widget = new Widget(t.account);
    userId = (await widget.register()).body.data.userId;
    operators = new OperatorSocket(await adminToken());
    await operators.connected();
  });
  afterEach(async () => {
    operators.close();
    await t.receiver.close();
  });

  it("PUT /users/{id}/owner naming the inbox: the bot gets the spec's changeOwner, the inbox a notice and no delivery", async () => {
    const handed = await api().put<{ changed: boolean; owner: { identification: string } }>(`/serviceApi/v2.3/users/${userId}/owner`, {
      token: t.service.apiKey,
      json: { serviceIdentification: inbox.identification },
    });
    expect(handed.status, handed.text).to.equal(200);
    expect(handed.body.data.changed).to.equal(true);
    expect(handed.body.data.owner.identification).to.equal(inbox.identification);
    await expectOutbox({ serviceId: t.service.id, userId }, 1, 'the action to the bot');
    await expectOutbox({ serviceId: inbox.id }, 0, 'the inbox has no webhook');
    const [toBot] = await receivedExactly(t.receiver, t.service.id, 1);
    expect(toBot?.json).to.deep.equal({
      type: 'owner',
      accountIdentification: t.account.identification,
      user: { id: userId, uniqueIdentifier: null, additionalInformation: null },
      body: {
        action: 'changeOwner',
        metadata: '',
        oldOwner: { name: 'Owner', identification: t.service.identification, default: true },
        newOwner: { name: 'Team inbox', identification: inbox.identification, default: false },
        initiatedBy: { name: 'Owner', identification: t.service.identification, default: true },
      },
    });
    await operators.waitFor(userId, 'owner');

    // The customer's next message is the team's: nothing goes to the bot, nothing to the inbox's outbox.
    expect((await widget.send('a human please')).status).to.equal(200);
    await expectOutbox({ serviceId: t.service.id, userId }, 1, 'the bot hears nothing more');
    await expectOutbox({ serviceId: inbox.id }, 0, 'still nothing for the inbox');
    await operators.waitFor(userId, 'message');
  });

  it('the dashboard hands it back (PUT /adminApi/…/owner naming the bot): the bot gets changeOwner and the next message', async () => {
    const token = await adminToken();
    const toInbox = await api().put(`/adminApi/accounts/${t.account.id}/users/${userId}/owner`, {
      token,
      json: { serviceIdentification: inbox.identification },
    });
    expect(toInbox.status, toInbox.text).to.equal(200);
    const back = await api().put(`/adminApi/accounts/${t.account.id}/users/${userId}/owner`, {
      token,
      json: { serviceIdentification: t.service.identification },
    });
    expect(back.status, back.text).to.equal(200);
    await expectOutbox({ serviceId: t.service.id, userId }, 2, 'both changes, to the bot');
    await expectOutbox({ serviceId: inbox.id }, 0, 'none to the inbox');
    expect((await widget.send('back to the bot')).status).to.equal(200);
    const received = await receivedExactly(t.receiver, t.service.id, 3);
    const bodies = received.map((r) => r.json as { body?: { action?: string; oldOwner?: { identification: string } }; message?: string });
    expect(bodies[0]?.body?.oldOwner?.identification).to.equal(t.service.identification);
    expect(bodies[1]?.body?.oldOwner?.identification).to.equal(inbox.identification);
    expect(bodies[2]?.message).to.equal('back to the bot');
  });
});

describe('team inbox: operators answer as agents', function () {
  this.timeout(30_000);
  let t: Tenant;
  let widget: Widget;
  let userId: number;

  beforeEach(async () => {
    t = await tenant();
    widget = new Widget(t.account);
  });
  afterEach(async () => {
    await t.receiver.close();
  });

  async function operator(grants: Array<{ permission: string; accountId: number | null }>) {
    const email = `agent-${Math.random().toString(36).slice(2)}@palaver.test`;
    const created = await api().post<{ id: number }>('/adminApi/operators', {
      token: await adminToken(),
      json: { email, password: 'agent password', grants },
    });
    expect(created.status, created.text).to.equal(201);
    const login = await api().post<{ token: string }>('/adminApi/login', { json: { email, password: 'agent password' } });
    return { id: created.body.data.id, token: login.body.data.token };
  }

  it('sets their own display name and avatar (https only) with PATCH /session', async () => {
    const me = await operator([]);
    const set = await api().patch<{ displayName: string; avatarUrl: string }>('/adminApi/session', {
      token: me.token,
      json: { displayName: 'Ada', avatarUrl: 'https://cdn.example/ada.png' },
    });
    expect(set.status, set.text).to.equal(200);
    expect(set.body.data).to.include({ displayName: 'Ada', avatarUrl: 'https://cdn.example/ada.png' });
    const shown = await api().get<{ displayName: string }>('/adminApi/session', { token: me.token });
    expect(shown.body.data).to.include({ displayName: 'Ada', avatarUrl: 'https://cdn.example/ada.png' });
    const plain = await api().patch('/adminApi/session', { token: me.token, json: { avatarUrl: 'http://cdn.example/ada.png' } });
    expect([plain.status, plain.body.notifications[0]?.field]).to.deep.equal([422, 'body.avatarUrl']);
  });

  it("an answer is an agent message like a Service's: live on the widget's socket, in GET /messages, pushed to app devices", async () => {
    const me = await operator([{ permission: 'conversations:reply', accountId: t.account.id }]);
    await api().patch('/adminApi/session', { token: me.token, json: { displayName: 'Ada', avatarUrl: 'https://cdn.example/ada.png' } });
    // An app device that can be pushed to (push webhook settings of the account).
    const hook = await Receiver.start();
    const saved = await api().put(`/adminApi/accounts/${t.account.id}/push-settings/webhook`, {
      token: await adminToken(),
      json: { url: `${hook.url}/push` },
    });
    expect(saved.status, saved.text).to.equal(200);
    userId = (await widget.register({ type: 1, pushToken: 'inbox-phone', pushType: 4, pushEnabled: true })).body.data.userId;
    const socket = new WidgetSocket(widget);
    try {
      await socket.connected();
      const typing = await api().post(`/adminApi/accounts/${t.account.id}/users/${userId}/typing`, {
        token: me.token,
        json: { isTyping: true },
      });
      expect(typing.status, typing.text).to.equal(200);
      const [typed] = await socket.waitFor('agentTyping', 1);
      expect(typed).to.deep.include({ isTyping: true });
      expect((typed as { agent: { name: string; id: number } }).agent).to.include({ id: me.id, name: 'Ada' });

      const answer = await api().post<{ id: number; typeId: number; agent: unknown }>(
        `/adminApi/accounts/${t.account.id}/users/${userId}/messages`,
        { token: me.token, json: { message: 'Hello, Ada here' } },
      );
      expect(answer.status, answer.text).to.equal(201);
      expect(answer.body.data).to.include({ typeId: 2 });
      const agent = { id: me.id, name: 'Ada', avatar: 'https://cdn.example/ada.png' };
      const [live] = await socket.waitFor('message', 1);
      expect(live).to.deep.include({ id: answer.body.data.id, typeId: 2, message: 'Hello, Ada here' });
      expect((live as { agent: Record<string, unknown> }).agent).to.include(agent);
      const listed = await widget.messages();
      const mine = listed.body.data.find((m) => m.id === answer.body.data.id) as unknown as {
        typeId: number;
        agent: Record<string, unknown>;
      };
      expect(mine.typeId).to.equal(2);
      expect(mine.agent).to.include(agent);
      // The same writer as the Service API's: the push of the message is in the outbox.
      const pushes = await pushRows(sharedServer(), t.account.id);
      expect(pushes.map((p) => p.kind)).to.include('push_message');
      // An answer is no webhook to the owner (a Service's agent message is none either).
      await expectOutbox({ serviceId: t.service.id, userId }, 0);
    } finally {
      socket.socket.close();
      await hook.close();
    }
  });

  it('needs conversations:reply on the account; a user of another account is not found', async () => {
    userId = (await widget.register()).body.data.userId;
    const reader = await operator([{ permission: 'conversations:read', accountId: t.account.id }]);
    const refused = await api().post(`/adminApi/accounts/${t.account.id}/users/${userId}/messages`, {
      token: reader.token,
      json: { message: 'no' },
    });
    expect([refused.status, refused.body.notifications[0]?.message]).to.deep.equal([403, 'permission_denied']);
    const other = await createAccount();
    const replier = await operator([{ permission: 'conversations:reply', accountId: other.id }]);
    const elsewhere = await api().post(`/adminApi/accounts/${other.id}/users/${userId}/messages`, {
      token: replier.token,
      json: { message: 'no' },
    });
    expect([elsewhere.status, elsewhere.body.notifications[0]?.message]).to.deep.equal([404, 'user_not_found']);
  });
});
