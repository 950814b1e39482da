// GET /adminApi/accounts/{id}/conversations: the dashboard's list, by last activity, keyset-paged.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { adminToken, createAccount, createService, type AccountData } from './support/factories.ts';
import { client } from './support/http.ts';
import { sharedServer } from './support/server.ts';
import { Widget } from './support/widget.ts';

interface ConversationEntry {
  user: { id: number; kind: string };
  lastMessage: { id: number; message: string | null; typeId: number } | null;
}

describe('Admin API: conversations by last activity', function () {
  this.timeout(30_000);
  const api = () => client(sharedServer().url);
  let account: AccountData;

  beforeEach(async () => {
    account = await createAccount();
    await createService(account.id, { name: 'Owner' });
  });

  const list = async (query = '', token?: string) =>
    api().get<ConversationEntry[]>(`/adminApi/accounts/${account.id}/conversations${query}`, { token: token ?? (await adminToken()) });

  async function visitor(): Promise<{ widget: Widget; userId: number }> {
    const widget = new Widget(account);
    const registered = await widget.register();
    expect(registered.status, registered.text).to.equal(200);
    return { widget, userId: registered.body.data.userId };
  }

  /** Every page, `limit` at a time: the user ids in order, and how many requests it took. */
  async function walk(limit: number): Promise<{ ids: number[]; pages: number }> {
    const ids: number[] = [];
    let before: string | null = null;
    let pages = 0;
    do {
      const page = await list(`?limit=${limit}${before ? `&before=${before}` : ''}`);
      expect(page.status, page.text).to.equal(200);
      ids.push(...page.body.data.map((c) => c.user.id));
      before = (page.body as unknown as { paging: { before: string | null } }).paging.before;
      pages += 1;
    } while (before !== null && pages < 50);
    return { ids, pages };
  }

  it('orders by last message, newest first, users without messages last (newest first); an old user who writes moves to the top', async () => {
    const [oldest, quiet, recent, silent] = [await visitor(), await visitor(), await visitor(), await visitor()];
    await oldest.widget.send('first question');
    await recent.widget.send('second question');
    const before = await list();
    expect(before.status, before.text).to.equal(200);
    expect(before.body.data.map((c) => c.user.id)).to.deep.equal([recent.userId, oldest.userId, silent.userId, quiet.userId]);
    expect(before.body.data.map((c) => c.lastMessage?.message ?? null)).to.deep.equal(['second question', 'first question', null, null]);

    await oldest.widget.send('still there?');
    const after = await list();
    expect(after.body.data.map((c) => c.user.id)).to.deep.equal([oldest.userId, recent.userId, silent.userId, quiet.userId]);
    expect(after.body.data[0]?.lastMessage?.message).to.equal('still there?');
  });

  it('presents the user and the last message exactly as the users list and the conversation do', async () => {
    const { widget, userId } = await visitor();
    await widget.send('hello');
    const token = await adminToken();
    const agent = await api().post(`/users/${userId}/messages`, {
      token: (await createService(account.id, { name: 'Agents' })).apiKey,
      json: {
        message: 'Hi, how can I help?',
        agent: { id: 3, name: 'Dana' },
        buttons: [{ title: 'Docs', payload: 'https://docs.example', type: 'webUrl' }],
      },
    });
    expect(agent.status, agent.text).to.equal(201);
    const [entry] = (await list()).body.data;
    const users = await api().get<unknown[]>(`/adminApi/accounts/${account.id}/users`, { token });
    const messages = await api().get<unknown[]>(`/adminApi/accounts/${account.id}/users/${userId}/messages?limit=1`, { token });
    expect(entry?.user).to.deep.equal(users.body.data[0]);
    expect(entry?.lastMessage).to.deep.equal(messages.body.data[0]);
  });

  it('pages with the cursor: every conversation once, in order, whatever the page size', async () => {
    const visitors: Array<{ widget: Widget; userId: number }> = [];
    for (let i = 0; i < 7; i++) visitors.push(await visitor());
    // Messages in an order unlike the users': 5, 1, 3, then 1 again; 0, 2, 4, 6 without any.
    for (const i of [5, 1, 3, 1]) expect((await visitors[i]?.widget.send(`from ${i}`))?.status).to.equal(200);
    const ids = (i: number) => visitors[i]?.userId;
    const expected = [ids(1), ids(3), ids(5), ids(6), ids(4), ids(2), ids(0)];
    for (const limit of [1, 2, 3, 7, 50]) {
      const { ids: walked, pages } = await walk(limit);
      expect(walked, `limit ${limit}`).to.deep.equal(expected);
      expect(pages, `limit ${limit}: no empty last page`).to.equal(Math.ceil(expected.length / limit));
    }
  });

  it('leaves out a conversation merged into a registered user, which carries it on', async () => {
    const { widget, userId: anonymousId } = await visitor();
    await widget.send('before signing in');
    widget.signIn(`customer-${randomBytes(4).toString('hex')}`);
    const merged = await widget.register();
    expect(merged.status, merged.text).to.equal(200);
    const registeredId = merged.body.data.userId;
    expect(registeredId).to.not.equal(anonymousId);
    const entries = (await list()).body.data;
    expect(entries.map((c) => c.user.id)).to.deep.equal([registeredId]);
    // Its last message is the user_registered signal, as the conversation view shows it.
    expect(entries[0]?.lastMessage).to.include({ typeId: 4, message: 'user_registered' });
  });

  it("does not show another account's conversations: 403 without the permission there", async () => {
    const { widget } = await visitor();
    await widget.send('private');
    const email = `reader-${randomBytes(4).toString('hex')}@palaver.test`;
    const created = await api().post('/adminApi/operators', {
      token: await adminToken(),
      json: { email, password: 'reader password', grants: [{ accountId: account.id, permission: 'conversations:read' }] },
    });
    expect(created.status, created.text).to.equal(201);
    const token = (await api().post<{ token: string }>('/adminApi/login', { json: { email, password: 'reader password' } })).body.data
      .token;
    expect((await list('', token)).body.data).to.have.length(1);

    const other = await createAccount();
    const elsewhere = await api().get(`/adminApi/accounts/${other.id}/conversations`, { token });
    expect(elsewhere.status).to.equal(403);
    // The operator with every permission sees the other account's list, and it is empty.
    const empty = await api().get<unknown[]>(`/adminApi/accounts/${other.id}/conversations`, { token: await adminToken() });
    expect(empty.body.data).to.deep.equal([]);
  });

  it('refuses a bad limit or cursor with 422 naming the field', async () => {
    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?limit=ten', 'limit'],
      ['?before=12', 'before'],
      ['?before=x12', 'before'],
      ['?before=m0', 'before'],
      ['?before=m-1', 'before'],
      ['?before=m99999999999999999', 'before'],
      ['?before=u2147483648', 'before'],
      ['?before=m1&before=m2', 'before'],
    ] as const) {
      const answer = await list(query);
      expect(answer.status, `${query}: ${answer.text}`).to.equal(422);
      expect(
        answer.body.notifications.map((n) => n.field),
        query,
      ).to.include(`query.${field}`);
    }
  });
});
