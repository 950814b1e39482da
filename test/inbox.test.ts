// The team inbox (docs/dashboard.md): the account's Service of kind `inbox`, how a bot hands a
// conversation over to it and takes it back, and what it refuses as a Service without a webhook.
import { expect } from 'chai';
import { io, type Socket } from 'socket.io-client';
import { adminToken, createAccount, createService } from './support/factories.ts';
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
    if (this.socket.connected) return Promise.resolve();
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

interface InboxRowData {
  user: { id: number; uniqueIdentifier: string | null };
  state: { status: string; assigneeId: number | null; waitingSince: string | null; ownerServiceId: number; snoozedUntil: string | null };
  unread: number;
}

interface StateData {
  userId: number;
  status: string;
  assigneeId: number | null;
  waitingSince: string | null;
}

interface EventData {
  id: number;
  operatorId: number | null;
  kind: string;
  text: string | null;
  data: Record<string, unknown> | null;
  createdAt: string;
}

async function agentOperator(grants: Array<{ permission: string; accountId: number | null }>) {
  const email = `team-${Math.random().toString(36).slice(2)}@palaver.test`;
  const created = await api().post<{ id: number }>('/adminApi/operators', {
    token: await adminToken(),
    json: { email, password: 'team password', grants },
  });
  expect(created.status, created.text).to.equal(201);
  const login = await api().post<{ token: string }>('/adminApi/login', { json: { email, password: 'team password' } });
  return { id: created.body.data.id, token: login.body.data.token };
}

describe('team inbox: conversation state, notes, canned replies, search, views', function () {
  this.timeout(60_000);
  let account: Awaited<ReturnType<typeof createAccount>>;
  let inbox: ServiceView;
  let token: string;

  /** An account whose default Service is its inbox: every conversation is the team's. */
  beforeEach(async () => {
    account = await createAccount();
    inbox = (await overview(account.id)).inbox as ServiceView;
    token = await adminToken();
    const chosen = await api().put(`/adminApi/accounts/${account.id}/default-service`, {
      token,
      json: { serviceIdentification: inbox.identification },
    });
    expect(chosen.status, chosen.text).to.equal(200);
    account = { ...account, defaultServiceId: inbox.id };
  });

  const view = async (name: string, as = token, extra = '') => {
    const answer = await api().get<InboxRowData[]>(`/adminApi/accounts/${account.id}/inbox?view=${name}${extra}`, { token: as });
    expect(answer.status, answer.text).to.equal(200);
    return answer;
  };
  const ids = async (name: string, as = token, extra = '') => (await view(name, as, extra)).body.data.map((r) => r.user.id);
  const timelineOf = async (userId: number) => {
    const answer = await api().get<EventData[]>(`/adminApi/accounts/${account.id}/users/${userId}/timeline`, { token });
    expect(answer.status, answer.text).to.equal(200);
    return answer;
  };

  async function customer(text: string, identifier?: string, info?: Record<string, unknown>) {
    const widget = new Widget(account);
    if (identifier) widget.signIn(identifier);
    const registered = await widget.register(info ? { userAdditionalInformation: info } : {});
    expect(registered.status, registered.text).to.equal(200);
    expect((await widget.send(text)).status).to.equal(200);
    return { widget, userId: registered.body.data.userId };
  }

  it('two operators claiming at once: one wins, the other gets 409 assignee_changed naming the winner', async () => {
    const { userId } = await customer('who will help me?');
    const grants = [
      { permission: 'conversations:reply', accountId: account.id },
      { permission: 'conversations:read', accountId: account.id },
    ];
    const a = await agentOperator(grants);
    const b = await agentOperator(grants);
    const [first] = (await view('unassigned', a.token)).body.data;
    expect(first).to.deep.include({ unread: 1 });
    expect(first?.state).to.include({ status: 'open', assigneeId: null, ownerServiceId: inbox.id });
    expect(first?.state.waitingSince).to.be.a('string');

    const claim = (who: { id: number; token: string }) =>
      api().put<StateData>(`/adminApi/accounts/${account.id}/users/${userId}/assignee`, {
        token: who.token,
        json: { assigneeId: who.id, expectedAssigneeId: null },
      });
    const answers = await Promise.all([claim(a), claim(b)]);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).to.deep.equal([200, 409]);
    const won = answers.find((r) => r.status === 200);
    const lost = answers.find((r) => r.status === 409);
    const winner = won?.body.data.assigneeId;
    expect([a.id, b.id]).to.include(winner);
    expect(lost?.body.notifications[0]?.message).to.equal('assignee_changed');
    expect(lost?.body.data).to.deep.equal({ assigneeId: winner });

    const winnerToken = winner === a.id ? a.token : b.token;
    const loserToken = winner === a.id ? b.token : a.token;
    expect(await ids('mine', winnerToken)).to.deep.equal([userId]);
    expect(await ids('mine', loserToken)).to.deep.equal([]);
    expect(await ids('unassigned')).to.deep.equal([]);
    expect(await ids('open')).to.deep.equal([userId]);
    // Assigning someone else needs conversations:assign.
    const reassign = await api().put(`/adminApi/accounts/${account.id}/users/${userId}/assignee`, {
      token: loserToken,
      json: { assigneeId: winner === a.id ? b.id : a.id, expectedAssigneeId: winner },
    });
    expect([reassign.status, reassign.body.notifications[0]?.message]).to.deep.equal([403, 'permission_denied']);
    const lines = (await timelineOf(userId)).body.data;
    expect(lines.map((l) => [l.kind, l.operatorId, l.data])).to.deep.equal([['assignee', winner, { from: null, to: winner }]]);
  });

  it('an answer ends the wait; resolve, then the customer writes again: reopened and unread, each change a timeline line', async () => {
    const { widget, userId } = await customer('first question');
    const me = await agentOperator([{ permission: 'conversations:reply', accountId: account.id }]);
    const answered = await api().post(`/adminApi/accounts/${account.id}/users/${userId}/messages`, {
      token: me.token,
      json: { message: 'answered' },
    });
    expect(answered.status).to.equal(201);
    let [row] = (await view('open')).body.data;
    expect(row?.state.waitingSince).to.equal(null);
    expect(row?.unread).to.equal(0);
    const resolved = await api().put<StateData>(`/adminApi/accounts/${account.id}/users/${userId}/status`, {
      token: me.token,
      json: { status: 'resolved', expectedStatus: 'open' },
    });
    expect(resolved.status, resolved.text).to.equal(200);
    expect(resolved.body.data.status).to.equal('resolved');
    expect(await ids('open')).to.deep.equal([]);
    expect(await ids('resolved')).to.deep.equal([userId]);
    // A stale compare-and-set: 409 status_changed with the status there is.
    const stale = await api().put(`/adminApi/accounts/${account.id}/users/${userId}/status`, {
      token: me.token,
      json: { status: 'snoozed', expectedStatus: 'open' },
    });
    expect([stale.status, stale.body.notifications[0]?.message, stale.body.data]).to.deep.equal([
      409,
      'status_changed',
      { status: 'resolved' },
    ]);

    expect((await widget.send('one more thing')).status).to.equal(200);
    [row] = (await view('open')).body.data;
    expect(row?.state.status).to.equal('open');
    expect(row?.unread).to.equal(1);
    expect(row?.state.waitingSince).to.be.a('string');
    const lines = (await timelineOf(userId)).body.data;
    expect(lines.map((l) => [l.kind, l.operatorId, l.data])).to.deep.equal([
      ['status', null, { from: 'resolved', to: 'open' }],
      ['status', me.id, { from: 'open', to: 'resolved' }],
    ]);
    // Read up to the newest message: nothing unread.
    const messages = await api().get<Array<{ id: number }>>(`/adminApi/accounts/${account.id}/users/${userId}/messages`, { token });
    const read = await api().put(`/adminApi/accounts/${account.id}/users/${userId}/read`, {
      token,
      json: { messageId: messages.body.data[0]?.id },
    });
    expect(read.status, read.text).to.equal(200);
    expect((await view('open')).body.data[0]?.unread).to.equal(0);
  });

  it("a snooze ends at its time, or at the customer's next message", async () => {
    const { widget, userId } = await customer('later is fine');
    const snooze = (until: string | null) =>
      api().put<StateData & { snoozedUntil: string | null }>(`/adminApi/accounts/${account.id}/users/${userId}/status`, {
        token,
        json: { status: 'snoozed', snoozedUntil: until },
      });
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await snooze(future)).body.data).to.include({ status: 'snoozed', snoozedUntil: future });
    expect(await ids('open')).to.deep.equal([]);
    const past = await snooze(new Date(Date.now() - 1000).toISOString());
    expect(past.body.data.status).to.equal('open');
    expect(await ids('open')).to.deep.equal([userId]);
    await snooze(null);
    expect(await ids('open')).to.deep.equal([]);
    expect((await widget.send('actually now')).status).to.equal(200);
    expect(await ids('open')).to.deep.equal([userId]);
  });

  it('views are sorted by how long the customer has waited, keyset-paged; bots lists what a webhook Service owns', async () => {
    const first = await customer('one');
    const second = await customer('two');
    const third = await customer('three');
    const answeredBy = await agentOperator([{ permission: 'conversations:reply', accountId: account.id }]);
    await api().post(`/adminApi/accounts/${account.id}/users/${first.userId}/messages`, {
      token: answeredBy.token,
      json: { message: 'done' },
    });
    // The first no longer waits: after the others.
    const walked: number[] = [];
    let after: string | null = null;
    for (let n = 0; n < 5; n++) {
      const page: Awaited<ReturnType<typeof view>> = await view('open', token, `&limit=1${after ? `&after=${after}` : ''}`);
      walked.push(...page.body.data.map((r) => r.user.id));
      after = (page.body as unknown as { paging: { after: string | null } }).paging.after;
      if (!after) break;
    }
    expect(walked).to.deep.equal([second.userId, third.userId, first.userId]);
    // A bot takes the third: it leaves the team's views for "bots".
    const bot = await createService(account.id, { name: 'Bot', webhookUrl: null });
    const moved = await api().put(`/adminApi/accounts/${account.id}/users/${third.userId}/owner`, {
      token,
      json: { serviceIdentification: bot.identification },
    });
    expect(moved.status, moved.text).to.equal(200);
    expect(await ids('bots')).to.deep.equal([third.userId]);
    expect(await ids('open')).to.deep.equal([second.userId, first.userId]);
  });

  it('bots pages across every bot Service, snoozed ones included; a snooze past its time is open again, in its place', async () => {
    const customers = [];
    for (const text of ['a', 'b', 'c', 'd', 'e']) customers.push((await customer(text)).userId);
    const [a, b, c, d, e] = customers as [number, number, number, number, number];
    const bot1 = await createService(account.id, { name: 'Bot 1', webhookUrl: null });
    const bot2 = await createService(account.id, { name: 'Bot 2', webhookUrl: null });
    for (const [userId, bot] of [
      [a, bot1],
      [b, bot2],
      [c, bot1],
    ] as const) {
      const moved = await api().put(`/adminApi/accounts/${account.id}/users/${userId}/owner`, {
        token,
        json: { serviceIdentification: bot.identification },
      });
      expect(moved.status, moved.text).to.equal(200);
    }
    const until = new Date(Date.now() + 3_600_000).toISOString();
    for (const userId of [c, d]) {
      const snoozed = await api().put(`/adminApi/accounts/${account.id}/users/${userId}/status`, {
        token,
        json: { status: 'snoozed', snoozedUntil: until },
      });
      expect(snoozed.status, snoozed.text).to.equal(200);
    }
    const walk = async (name: string) => {
      const walked: number[] = [];
      let after: string | null = null;
      for (let n = 0; n < 10; n++) {
        const page: Awaited<ReturnType<typeof view>> = await view(name, token, `&limit=1${after ? `&after=${after}` : ''}`);
        walked.push(...page.body.data.map((r) => r.user.id));
        after = (page.body as unknown as { paging: { after: string | null } }).paging.after;
        if (!after) break;
      }
      return walked;
    };
    expect(await walk('bots'), 'two Services, open and snoozed, by waiting').to.deep.equal([a, b, c]);
    expect(await walk('open'), 'd is snoozed').to.deep.equal([e]);
    // d's snooze ends by its time: open again, before e (d has waited longer).
    await sharedServer()
      .deps.db.orm.em.fork()
      .getConnection()
      .execute(`update conversation_states set snoozed_until = now() - interval '1 minute' where user_id = ?`, [d]);
    expect(await walk('open')).to.deep.equal([d, e]);
    expect(await walk('unassigned')).to.deep.equal([d, e]);
  });

  it('search: message text, customer identifier and additional-information values', async () => {
    const a = await customer('My parcel never arrived', 'customer-4711', { plan: 'Gold', city: 'Utrecht' });
    const b = await customer('Question about invoices');
    expect(await ids('open', token, '&q=parcel')).to.deep.equal([a.userId]);
    expect(await ids('open', token, '&q=invoices')).to.deep.equal([b.userId]);
    expect(await ids('open', token, '&q=customer-4711')).to.deep.equal([a.userId]);
    expect(await ids('open', token, '&q=utrecht')).to.deep.equal([a.userId]);
    expect(await ids('open', token, '&q=nothing%20like%20this')).to.deep.equal([]);
  });

  it("a login merge carries the conversation's team side to the registered user", async () => {
    const { widget, userId: anonymousId } = await customer('before signing in');
    const note = await api().post(`/adminApi/accounts/${account.id}/users/${anonymousId}/notes`, { token, json: { text: 'seen before' } });
    expect(note.status, note.text).to.equal(201);
    const resolved = await api().put(`/adminApi/accounts/${account.id}/users/${anonymousId}/status`, {
      token,
      json: { status: 'resolved' },
    });
    expect(resolved.status).to.equal(200);
    widget.signIn('merge-customer');
    const merged = await widget.register();
    expect(merged.status, merged.text).to.equal(200);
    const registeredId = merged.body.data.userId;
    expect(registeredId).to.not.equal(anonymousId);
    expect(await ids('resolved')).to.deep.equal([registeredId]);
    const lines = (await timelineOf(registeredId)).body.data;
    expect(lines.map((l) => [l.kind, l.text ?? l.data?.to])).to.deep.equal([
      ['status', 'resolved'],
      ['note', 'seen before'],
    ]);
    expect((await widget.send('signed in now')).status).to.equal(200);
    expect(await ids('open')).to.deep.equal([registeredId]);
  });

  it('an erasure (DELETE /adminApi/…/users/{id}) removes the team side too, the merged anonymous conversation included', async () => {
    const secret = `erase-${Math.random().toString(36).slice(2)}`;
    const { widget, userId: anonymousId } = await customer('before signing in');
    const before = await api().post(`/adminApi/accounts/${account.id}/users/${anonymousId}/notes`, {
      token,
      json: { text: `anonymous ${secret}` },
    });
    expect(before.status, before.text).to.equal(201);
    widget.signIn(`erase-customer-${secret}`);
    const merged = await widget.register();
    expect(merged.status, merged.text).to.equal(200);
    const registeredId = merged.body.data.userId;
    const after = await api().post(`/adminApi/accounts/${account.id}/users/${registeredId}/notes`, {
      token,
      json: { text: `registered ${secret}` },
    });
    expect(after.status, after.text).to.equal(201);
    const resolved = await api().put(`/adminApi/accounts/${account.id}/users/${registeredId}/status`, {
      token,
      json: { status: 'resolved' },
    });
    expect(resolved.status, resolved.text).to.equal(200);
    const db = sharedServer().deps.db.orm.em.fork().getConnection();
    const left = async () => {
      const [row] = await db.execute<Array<{ notes: string | number; lines: string | number; states: string | number }>>(
        `select (select count(*) from conversation_events where text like ?) as notes,
                (select count(*) from conversation_events where user_id in (?, ?)) as lines,
                (select count(*) from conversation_states where user_id in (?, ?)) as states`,
        [`%${secret}%`, anonymousId, registeredId, anonymousId, registeredId],
      );
      return [Number(row?.notes), Number(row?.lines), Number(row?.states)];
    };
    expect(await left(), 'before the erasure: two notes, a status line, one state').to.deep.equal([2, 3, 1]);

    const erased = await api().delete<{ userIds: number[] }>(`/adminApi/accounts/${account.id}/users/${registeredId}`, { token });
    expect(erased.status, erased.text).to.equal(200);
    expect(erased.body.data.userIds).to.have.members([registeredId, anonymousId]);
    expect(await left(), 'after it: no note, no line, no state').to.deep.equal([0, 0, 0]);
    expect(await ids('open')).to.deep.equal([]);
    expect(await ids('resolved')).to.deep.equal([]);
    const timeline = await api().get(`/adminApi/accounts/${account.id}/users/${registeredId}/timeline`, { token });
    expect(timeline.status).to.equal(404);
    const noted = await api().post(`/adminApi/accounts/${account.id}/users/${registeredId}/notes`, { token, json: { text: 'late' } });
    expect(noted.status).to.equal(404);
  });

  it('canned replies: managed with accounts:edit, read with conversations:read, shortcuts unique per account', async () => {
    const path = `/adminApi/accounts/${account.id}/canned-replies`;
    const made = await api().post<{ id: number; shortcut: string }>(path, {
      token,
      json: { shortcut: 'hello', text: 'Hello! How can I help?' },
    });
    expect(made.status, made.text).to.equal(201);
    const again = await api().post(path, { token, json: { shortcut: 'hello', text: 'again' } });
    expect([again.status, again.body.notifications[0]?.message]).to.deep.equal([409, 'already_exists']);
    const changed = await api().patch<{ text: string }>(`${path}/${made.body.data.id}`, { token, json: { text: 'Hi there!' } });
    expect(changed.body.data.text).to.equal('Hi there!');
    const reader = await agentOperator([{ permission: 'conversations:read', accountId: account.id }]);
    const listed = await api().get<Array<{ shortcut: string; text: string }>>(path, { token: reader.token });
    expect(listed.body.data.map((r) => [r.shortcut, r.text])).to.deep.equal([['hello', 'Hi there!']]);
    expect((await api().post(path, { token: reader.token, json: { shortcut: 'x', text: 'y' } })).status).to.equal(403);
    expect((await api().delete(`${path}/${made.body.data.id}`, { token })).status).to.equal(200);
    expect((await api().get<unknown[]>(path, { token })).body.data).to.deep.equal([]);
  });
});

describe('team inbox: private notes are nowhere but the dashboard', function () {
  this.timeout(60_000);
  let t: Tenant;

  beforeEach(async () => {
    t = await tenant();
  });
  afterEach(async () => {
    await t.receiver.close();
  });

  it('absent from the Client API, the widget socket, webhooks, pushes and the Service API; present in the timeline', async () => {
    const token = await adminToken();
    const hook = await Receiver.start();
    const operators = new OperatorSocket(token);
    try {
      const saved = await api().put(`/adminApi/accounts/${t.account.id}/push-settings/webhook`, {
        token,
        json: { url: `${hook.url}/push` },
      });
      expect(saved.status, saved.text).to.equal(200);
      const widget = new Widget(t.account);
      const userId = (await widget.register({ type: 1, pushToken: 'note-phone', pushType: 4, pushEnabled: true })).body.data.userId;
      expect((await widget.send('hello bot')).status).to.equal(200);
      await receivedExactly(t.receiver, t.service.id, 1);
      const socket = new WidgetSocket(widget);
      await socket.connected();
      await operators.connected();
      const outboxBefore = await outboxRows({ serviceId: t.service.id });
      const pushesBefore = await pushRows(sharedServer(), t.account.id);

      const secret = `note-${Math.random().toString(36).slice(2)}`;
      const noted = await api().post<EventData>(`/adminApi/accounts/${t.account.id}/users/${userId}/notes`, {
        token,
        json: { text: `Customer is upset, ${secret}` },
      });
      expect(noted.status, noted.text).to.equal(201);
      expect(noted.body.data).to.include({ kind: 'note', text: `Customer is upset, ${secret}` });
      await operators.waitFor(userId, 'note');

      // Nothing was written for anyone: the outbox and the pushes are exactly as before.
      expect(await outboxRows({ serviceId: t.service.id })).to.deep.equal(outboxBefore);
      expect(await pushRows(sharedServer(), t.account.id)).to.deep.equal(pushesBefore);
      const anywhere = await sharedServer()
        .deps.db.orm.em.fork()
        .getConnection()
        .execute<Array<{ n: string | number }>>(`select count(*) as n from deliveries where payload like ?`, [`%${secret}%`]);
      expect(Number(anywhere[0]?.n)).to.equal(0);
      // Not a message: neither the customer's nor a Service's reads show it.
      const clientRead = await widget.messages();
      expect(clientRead.status).to.equal(200);
      expect(clientRead.text).to.not.include(secret);
      const serviceRead = await api().get(`/serviceApi/v2.3/users/${userId}/messages`, { token: t.service.apiKey });
      expect(serviceRead.status).to.equal(200);
      expect(serviceRead.text).to.not.include(secret);
      // The widget's socket got no frame at all from it.
      await socket.roundTrip();
      expect(JSON.stringify(socket.pushed)).to.not.include(secret);
      expect(socket.pushed.filter((p) => p.event !== 'connected' && p.event !== 'error')).to.deep.equal([]);
      socket.socket.close();
      // The dashboard's timeline has it, with who and when.
      const lines = await api().get<EventData[]>(`/adminApi/accounts/${t.account.id}/users/${userId}/timeline`, { token });
      expect(lines.body.data.map((l) => [l.kind, l.text])).to.deep.equal([['note', `Customer is upset, ${secret}`]]);
      expect(lines.body.data[0]?.operatorId).to.be.a('number');
    } finally {
      operators.close();
      await hook.close();
    }
  });
});

describe('team inbox: taking over from a bot', function () {
  this.timeout(30_000);

  it('POST …/take-over (conversations:reply): the inbox owns it, the bot gets changeOwner initiated by the operator', async () => {
    const t = await tenant();
    try {
      const inbox = (await overview(t.account.id)).inbox as ServiceView;
      const widget = new Widget(t.account);
      const userId = (await widget.register()).body.data.userId;
      const me = await agentOperator([{ permission: 'conversations:reply', accountId: t.account.id }]);
      const taken = await api().post<{ ownerServiceId: number; changed: boolean }>(
        `/adminApi/accounts/${t.account.id}/users/${userId}/take-over`,
        { token: me.token },
      );
      expect(taken.status, taken.text).to.equal(200);
      expect(taken.body.data).to.include({ ownerServiceId: inbox.id, changed: true });
      await expectOutbox({ serviceId: inbox.id }, 0);
      const [toBot] = await receivedExactly(t.receiver, t.service.id, 1);
      const session = await api().get<{ identifier: string }>('/adminApi/session', { token: me.token });
      expect((toBot?.json as { body: unknown }).body).to.deep.equal({
        action: 'changeOwner',
        metadata: '',
        oldOwner: { name: 'Owner', identification: t.service.identification, default: true },
        newOwner: { name: 'Team inbox', identification: inbox.identification, default: false },
        initiatedBy: { name: 'operator', identification: session.body.data.identifier, default: false },
      });
      const again = await api().post<{ changed: boolean }>(`/adminApi/accounts/${t.account.id}/users/${userId}/take-over`, {
        token: me.token,
      });
      expect(again.body.data.changed).to.equal(false);
    } finally {
      await t.receiver.close();
    }
  });
});
