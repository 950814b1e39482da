import { api } from '../api.ts';
import { field, formatTime, h, show } from '../dom.ts';
import { onConversation } from '../live.ts';
import { ConversationFiles } from '../media.ts';
import type { PageContext } from '../main.ts';
import { can } from '../permissions.ts';
import type { AccountOverview, ChatMessage, UserSummary } from '../types.ts';
import { badge, busy, confirm, say, statusLine } from '../ui.ts';

const TYPE_NAMES: Record<number, string> = { 1: 'user', 2: 'agent', 3: 'system', 4: 'system', 5: 'system' };

function userName(user: UserSummary): string {
  const info = user.additionalInformation as { name?: unknown; email?: unknown } | null;
  const named = typeof info?.name === 'string' ? info.name : typeof info?.email === 'string' ? info.email : null;
  return named ?? user.uniqueIdentifier ?? `Anonymous user ${user.id}`;
}

/** Conversations of an account, newest first, live; with a user id, that conversation too. */
export async function conversationsPage(ctx: PageContext, accountId: number, userId?: number): Promise<void> {
  const account = (await api.get<AccountOverview>(`/accounts/${accountId}`)).data;
  const services = new Map(account.services.map((s) => [s.id, s.name]));
  const list = h('ul', { class: 'plain users', 'aria-label': 'Users' });
  const view = h('section', { class: 'card conversation', 'aria-label': 'Conversation' });
  const files = new ConversationFiles(accountId);
  ctx.onLeave(() => files.release());

  const renderList = async () => {
    const users = (await api.get<UserSummary[]>(`/accounts/${accountId}/users?limit=100`)).data;
    // Newest activity first: a user's last message (fetched per user, one page of one message).
    const withLast = await Promise.all(
      users.map(async (user) => {
        const last = (await api.get<ChatMessage[]>(`/accounts/${accountId}/users/${user.id}/messages?limit=1`)).data[0] ?? null;
        return { user, last };
      }),
    );
    withLast.sort((a, b) => (b.last?.time ?? Date.parse(b.user.createdAt) / 1000) - (a.last?.time ?? Date.parse(a.user.createdAt) / 1000));
    show(
      list,
      ...(withLast.length === 0
        ? [h('li', { class: 'empty' }, 'No conversations yet.')]
        : withLast.map(({ user, last }) =>
            h(
              'li',
              { class: user.id === userId ? 'current' : '' },
              h(
                'a',
                { href: `#/accounts/${accountId}/conversations/${user.id}`, 'aria-current': user.id === userId ? 'page' : null },
                h('strong', {}, userName(user)),
                h('span', { class: 'last' }, last ? (last.message ?? (last.image ? '[file]' : '')) : 'No messages'),
                h(
                  'span',
                  { class: 'hint' },
                  `${services.get(user.ownerServiceId) ?? 'Service'}${user.agent ? ` · ${user.agent.name}` : ''}${last ? ` · ${formatTime(last.time)}` : ''}`,
                ),
              ),
            ),
          )),
    );
  };

  const renderConversation = async () => {
    if (userId === undefined) {
      show(view, h('p', { class: 'empty' }, 'Choose a conversation.'));
      return;
    }
    const answer = await api.get<ChatMessage[]>(`/accounts/${accountId}/users/${userId}/messages?limit=200`);
    const messages = [...answer.data].sort((a, b) => a.id - b.id);
    const agent = answer.agent as { name: string } | null;
    const status = statusLine();
    const erase = can(ctx.me.grants, 'users:delete', accountId)
      ? h('button', { type: 'button', class: 'danger' }, 'Delete user (GDPR)')
      : null;
    erase?.addEventListener(
      'click',
      () =>
        void (async () => {
          if (
            !(await confirm(
              'Delete user',
              'The user, their messages, files, devices and deliveries are erased for good. This cannot be undone.',
              'Delete for good',
            ))
          )
            return;
          await busy(erase, status, async () => {
            await api.delete(`/accounts/${accountId}/users/${userId}`);
            location.hash = `#/accounts/${accountId}/conversations`;
          });
        })(),
    );
    const user = (await api.get<UserSummary[]>(`/accounts/${accountId}/users?limit=1&before=${userId + 1}`)).data.find(
      (u) => u.id === userId,
    );
    const ownerForm = user
      ? ownerSection(ctx, account, user, async () => {
          await renderList();
          await renderConversation();
        })
      : null;
    show(
      view,
      h(
        'div',
        { class: 'row spread' },
        h(
          'div',
          { class: 'row' },
          h('h2', {}, user ? userName(user) : `User ${userId}`),
          agent ? badge(`agent: ${agent.name}`, 'ok') : null,
        ),
        erase,
      ),
      user
        ? h(
            'p',
            { class: 'hint' },
            `${user.kind === 'registered' ? 'Registered' : 'Anonymous'} · owner ${services.get(user.ownerServiceId) ?? 'Service'} · since ${formatTime(user.createdAt)}`,
          )
        : null,
      status,
      ownerForm,
      h(
        'ol',
        { class: 'messages', 'aria-label': 'Messages', 'aria-live': 'polite' },
        ...messages.map((m) => {
          const who = TYPE_NAMES[m.typeId] ?? 'system';
          return h(
            'li',
            { class: `message ${who}` },
            h('span', { class: 'author' }, who === 'agent' ? (m.agent?.name ?? 'Agent') : who === 'user' ? 'User' : 'System'),
            m.message ? h('span', { class: 'text' }, m.message) : null,
            m.media ? files.view(m.media) : null,
            h('time', { class: 'hint' }, formatTime(m.time)),
          );
        }),
      ),
    );
  };

  show(
    ctx.main,
    h(
      'p',
      { class: 'crumbs' },
      h('a', { href: '#/accounts' }, 'Accounts'),
      ' / ',
      h('a', { href: `#/accounts/${accountId}` }, account.name),
      ' / Conversations',
    ),
    h('h1', {}, 'Conversations'),
    h('div', { class: 'split' }, h('section', { class: 'card', 'aria-label': 'Conversation list' }, list), view),
  );
  await Promise.all([renderList(), renderConversation()]);
  ctx.onLeave(
    onConversation((change) => {
      if (change.accountId !== accountId) return;
      void renderList();
      if (change.userId === userId) void renderConversation();
    }),
  );
}

/**
 * The owner Service of the conversation. An operator's change is delivered as changeOwner to the
 * old and the new owner, `initiatedBy` naming the operator (docs/dashboard.md).
 */
function ownerSection(ctx: PageContext, account: AccountOverview, user: UserSummary, changed: () => Promise<void>): HTMLElement {
  const editable = can(ctx.me.grants, 'services:edit', account.id);
  const select = h(
    'select',
    { name: 'owner', disabled: !editable },
    ...account.services.map((s) => h('option', { value: s.identification, selected: s.id === user.ownerServiceId }, s.name)),
  );
  const button = h('button', { type: 'submit', class: 'secondary', disabled: !editable }, 'Change owner');
  const status = statusLine();
  const form = h(
    'form',
    { class: 'row owner' },
    field('Owner Service', select),
    button,
    editable ? null : h('span', { class: 'hint' }, 'Changing the owner needs the services:edit permission.'),
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(button, status, async () => {
      const answer = await api.put<{ changed: boolean }>(`/accounts/${account.id}/users/${user.id}/owner`, {
        serviceIdentification: select.value,
      });
      say(status, answer.data.changed ? 'Owner changed; both Services are told.' : 'That Service already owns it.');
      if (answer.data.changed) await changed();
    });
  });
  return form;
}
