import { api } from '../api.ts';
import { coalesced } from '../coalesce.ts';
import { field, formatTime, h, show } from '../dom.ts';
import { onConversation } from '../live.ts';
import { ConversationFiles } from '../media.ts';
import type { PageContext } from '../main.ts';
import { can } from '../permissions.ts';
import type { AccountOverview, ChatMessage, Conversation, UserSummary } from '../types.ts';
import { badge, busy, confirm, errorText, say, statusLine } from '../ui.ts';
import { LoadedConversations } from './conversation-list.ts';

const TYPE_NAMES: Record<number, string> = { 1: 'user', 2: 'agent', 3: 'system', 4: 'system', 5: 'system' };
/** Messages a read: the newest when a conversation opens or changes, then older ones on request. */
const MESSAGES_PAGE = 200;

function userName(user: UserSummary): string {
  const info = user.additionalInformation as { name?: unknown; email?: unknown } | null;
  const named = typeof info?.name === 'string' ? info.name : typeof info?.email === 'string' ? info.email : null;
  return named ?? user.uniqueIdentifier ?? `Anonymous user ${user.id}`;
}

/**
 * The list as loaded for the account last shown: kept while the operator moves between its
 * conversations. Only for the same sign-in (`me` is read again at each), so nobody else sees it.
 */
let kept: { me: PageContext['me']; list: LoadedConversations } | null = null;

/** Near enough to the end of a scroller to count as reading the newest message. */
function atBottom(scroller: HTMLElement): boolean {
  return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 24;
}

function listEntry(
  accountId: number,
  services: Map<number, string>,
  current: number | undefined,
  { user, lastMessage: last }: Conversation,
) {
  return h(
    'li',
    { class: user.id === current ? 'current' : '' },
    h(
      'a',
      { href: `#/accounts/${accountId}/conversations/${user.id}`, 'aria-current': user.id === current ? 'page' : null },
      h('strong', {}, userName(user)),
      last ? h('span', { class: 'last' }, last.message ?? (last.image ? '[file]' : '')) : h('span', { class: 'last none' }, 'No messages'),
      h(
        'span',
        { class: 'hint' },
        `${services.get(user.ownerServiceId) ?? 'Service'}${user.agent ? ` · ${user.agent.name}` : ''}${last ? ` · ${formatTime(last.time)}` : ''}`,
      ),
    ),
  );
}

/** Conversations of an account by last activity, live; with a user id, that conversation too. */
export async function conversationsPage(ctx: PageContext, accountId: number, userId?: number): Promise<void> {
  const account = (await api.get<AccountOverview>(`/accounts/${accountId}`)).data;
  const services = new Map([...account.services, ...(account.inbox ? [account.inbox] : [])].map((s) => [s.id, s.name]));
  const loaded = kept?.me === ctx.me && kept.list.accountId === accountId ? kept.list : new LoadedConversations(accountId);
  kept = { me: ctx.me, list: loaded };
  const list = h('ul', { class: 'plain users', 'aria-label': 'Users' });
  const more = h('button', { type: 'button', class: 'secondary' }, 'Show more conversations');
  const listStatus = statusLine();
  const scroller = h('div', { class: 'conversation-list' }, list, more, listStatus);
  scroller.addEventListener('scroll', () => {
    loaded.scrollTop = scroller.scrollTop;
  });
  const view = h('section', { class: 'card conversation', 'aria-label': 'Conversation' });
  const files = new ConversationFiles(accountId);
  ctx.onLeave(() => files.release());

  const drawList = () => {
    const entries = loaded.all();
    const top = scroller.scrollTop;
    show(
      list,
      ...(entries.length === 0
        ? [h('li', { class: 'empty' }, 'No conversations yet.')]
        : entries.map((entry) => listEntry(accountId, services, userId, entry))),
    );
    more.hidden = loaded.next === null;
    scroller.scrollTop = top;
  };
  const refreshList = coalesced(
    async () => {
      await loaded.refresh();
      drawList();
    },
    (err) => say(listStatus, errorText(err), 'error'),
  );
  more.addEventListener(
    'click',
    () =>
      void busy(more, listStatus, async () => {
        await loaded.loadMore();
        drawList();
      }),
  );

  // The messages list stays in the page across live updates (only new messages are added), so
  // its scroll position and loaded images stay. It follows the newest message while pinned: on
  // opening, and while the operator is at the bottom; scrolled up, the view stays where it is.
  const heading = h('div', {});
  // Focusable: it scrolls, and a keyboard user scrolls it with the arrow keys.
  const messagesList = h('ol', { class: 'messages', 'aria-label': 'Messages', 'aria-live': 'polite', tabindex: 0 });
  const drawn = new Map<number, HTMLElement>();
  let pinned = true;
  const toBottom = () => {
    messagesList.scrollTop = messagesList.scrollHeight;
  };
  messagesList.addEventListener('scroll', () => {
    pinned = atBottom(messagesList);
  });
  // An image takes its height when it has loaded, after the list was scrolled.
  messagesList.addEventListener(
    'load',
    () => {
      if (pinned) toBottom();
    },
    true,
  );

  // Every message read for this conversation, the newest page (read again on every change) and
  // the older pages loaded with "Show older messages": kept across live updates.
  const known = new Map<number, ChatMessage>();
  /** Where the next older page starts; null when the oldest message is shown. */
  let olderThan: number | null = null;
  const olderButton = h('button', { type: 'button', class: 'secondary small older' }, 'Show older messages');
  olderButton.hidden = true;
  const olderStatus = statusLine();

  const drawMessages = (messages: ChatMessage[], { prepended = false } = {}) => {
    const top = messagesList.scrollTop;
    // Older messages go above: what the operator was reading stays where it was on screen.
    const fromBottom = messagesList.scrollHeight - top;
    const listTop = messagesList.getBoundingClientRect().top;
    const stay = pinned && !prepended;
    show(
      messagesList,
      ...messages.map((m) => {
        const existing = drawn.get(m.id);
        if (existing) return existing;
        const who = TYPE_NAMES[m.typeId] ?? 'system';
        const item = h(
          'li',
          { class: `message ${who}` },
          h('span', { class: 'author' }, who === 'agent' ? (m.agent?.name ?? 'Agent') : who === 'user' ? 'User' : 'System'),
          m.message ? h('span', { class: 'text' }, m.message) : null,
          m.media ? files.view(m.media) : null,
          h('time', { class: 'hint' }, formatTime(m.time)),
        );
        drawn.set(m.id, item);
        return item;
      }),
    );
    olderButton.hidden = olderThan === null;
    // The button above comes or goes: the list moves on the page by as much, and its content with it.
    const moved = messagesList.getBoundingClientRect().top - listTop;
    if (stay) toBottom();
    else if (prepended) messagesList.scrollTop = messagesList.scrollHeight - fromBottom + moved;
    else messagesList.scrollTop = top + moved;
  };
  const allMessages = () => [...known.values()].sort((a, b) => a.id - b.id);
  olderButton.addEventListener(
    'click',
    () =>
      void busy(olderButton, olderStatus, async () => {
        if (userId === undefined || olderThan === null) return;
        const page = await api.get<ChatMessage[]>(
          `/accounts/${accountId}/users/${userId}/messages?limit=${MESSAGES_PAGE}&before=${olderThan}`,
        );
        for (const m of page.data) known.set(m.id, m);
        olderThan = (page.paging as { before: number | null }).before;
        drawMessages(allMessages(), { prepended: true });
      }),
  );

  const renderConversation = async (conversation: number) => {
    const [answer, users] = await Promise.all([
      api.get<ChatMessage[]>(`/accounts/${accountId}/users/${conversation}/messages?limit=${MESSAGES_PAGE}`),
      api.get<UserSummary[]>(`/accounts/${accountId}/users?limit=1&before=${conversation + 1}`),
    ]);
    const before = (answer.paging as { before: number | null }).before;
    const newestKnown = Math.max(0, ...known.keys());
    // The first read, or more messages came since the last one than a page holds: what is known
    // no longer joins the newest page, so the view starts again from it (older ones on request).
    if (known.size === 0 || (before !== null && before > newestKnown)) {
      known.clear();
      olderThan = before;
    }
    for (const m of answer.data) known.set(m.id, m);
    const agent = answer.agent as { name: string } | null;
    const user = users.data.find((u) => u.id === conversation);
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
            await api.delete(`/accounts/${accountId}/users/${conversation}`);
            loaded.forget(conversation);
            location.hash = `#/accounts/${accountId}/conversations`;
          });
        })(),
    );
    const ownerForm = user
      ? ownerSection(ctx, account, user, async () => {
          await Promise.all([refreshList(), refreshConversation()]);
        })
      : null;
    show(
      heading,
      h(
        'div',
        { class: 'row spread' },
        h(
          'div',
          { class: 'row' },
          h('h2', {}, user ? userName(user) : `User ${conversation}`),
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
    );
    drawMessages(allMessages());
  };
  const refreshConversation = coalesced(
    async () => {
      if (userId !== undefined) await renderConversation(userId);
    },
    (err) => show(heading, h('p', { role: 'alert', class: 'status error' }, errorText(err))),
  );

  if (userId === undefined) show(view, h('p', { class: 'empty' }, 'Choose a conversation.'));
  else show(view, heading, olderButton, olderStatus, messagesList);
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
    h('div', { class: 'split' }, h('section', { class: 'card', 'aria-label': 'Conversation list' }, scroller), view),
  );
  // What was loaded before (another conversation of the account) at once, where it was scrolled to.
  drawList();
  scroller.scrollTop = loaded.scrollTop;
  // Listening before the first reads: a change while they run is read after them.
  ctx.onLeave(
    onConversation((change) => {
      if (change.accountId !== accountId) return;
      void refreshList();
      if (change.userId === userId) void refreshConversation();
    }),
  );
  await Promise.all([refreshList(), refreshConversation()]);
  // In one column (narrow screens) the conversation is under the list: a chosen one is brought into view.
  if (userId !== undefined && matchMedia('(max-width: 1000px)').matches) view.scrollIntoView({ block: 'start' });
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
    ...[...account.services, ...(account.inbox ? [account.inbox] : [])].map((s) =>
      h('option', { value: s.identification, selected: s.id === user.ownerServiceId }, s.name),
    ),
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
