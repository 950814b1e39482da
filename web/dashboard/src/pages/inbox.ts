// The team inbox (docs/dashboard.md): the views of the account's conversations (mine,
// unassigned, all open, bots, resolved) and search; a conversation's timeline (messages, private
// notes, status lines) with a composer (Enter sends, Shift+Enter a new line, a note mode, `/`
// canned replies), assign, resolve, snooze and take-over controls, and who the customer is. Live
// through the /operators channel: a change re-reads what it names.
import { api } from '../api.ts';
import { coalesced } from '../coalesce.ts';
import { field, formatTime, h, show } from '../dom.ts';
import { onConversation } from '../live.ts';
import type { PageContext } from '../main.ts';
import { can } from '../permissions.ts';
import type { AccountOverview, ChatMessage, UserSummary } from '../types.ts';
import { badge, busy, errorText, say, statusLine } from '../ui.ts';

type View = 'mine' | 'unassigned' | 'open' | 'bots' | 'resolved';

const VIEWS: Array<[View, string]> = [
  ['mine', 'Mine'],
  ['unassigned', 'Unassigned'],
  ['open', 'All open'],
  ['bots', 'Bots'],
  ['resolved', 'Resolved'],
];

interface State {
  userId: number;
  ownerServiceId: number;
  status: 'open' | 'snoozed' | 'resolved';
  snoozedUntil: string | null;
  assigneeId: number | null;
  waitingSince: string | null;
  readMessageId: number;
}

interface InboxRow {
  user: UserSummary;
  state: State;
  unread: number;
}

interface TimelineLine {
  id: number;
  operatorId: number | null;
  kind: 'note' | 'status' | 'assignee';
  text: string | null;
  data: Record<string, unknown> | null;
  createdAt: string;
}

interface CannedReply {
  id: number;
  shortcut: string;
  text: string;
}

/** The view and search chosen, kept while the operator moves between conversations. */
let chosen: { view: View; q: string } = { view: 'unassigned', q: '' };

function customerName(user: UserSummary): string {
  const info = user.additionalInformation as { name?: unknown; email?: unknown } | null;
  const named = typeof info?.name === 'string' ? info.name : typeof info?.email === 'string' ? info.email : null;
  return named ?? user.uniqueIdentifier ?? `Anonymous user ${user.id}`;
}

function waited(since: string | null): string {
  if (!since) return 'answered';
  const minutes = Math.max(0, Math.round((Date.now() - Date.parse(since)) / 60_000));
  return minutes < 1 ? 'waiting < 1 min' : minutes < 60 ? `waiting ${minutes} min` : `waiting ${Math.round(minutes / 60)} h`;
}

export async function inboxPage(ctx: PageContext, accountId: number, userId?: number): Promise<void> {
  const account = (await api.get<AccountOverview>(`/accounts/${accountId}`)).data;
  const inbox = account.inbox;
  const services = new Map([...account.services, ...(inbox ? [inbox] : [])].map((s) => [s.id, s.name]));
  const mayReply = can(ctx.me.grants, 'conversations:reply', accountId);
  const operatorName = (id: number | null) => (id === null ? 'nobody' : id === ctx.me.id ? 'you' : `operator ${id}`);

  // The views and search.
  const tabs = h('div', { class: 'row views', role: 'group', 'aria-label': 'Views' });
  const search = h('input', { type: 'search', name: 'q', value: chosen.q });
  const searchForm = h(
    'form',
    { class: 'row', role: 'search' },
    field('Search conversations', search),
    h('button', { type: 'submit', class: 'secondary' }, 'Search'),
  );
  const list = h('ul', { class: 'plain users', 'aria-label': 'Inbox conversations' });
  const listStatus = statusLine();
  const drawTabs = () =>
    show(
      tabs,
      ...VIEWS.map(([view, label]) =>
        h(
          'button',
          {
            type: 'button',
            class: view === chosen.view ? '' : 'secondary',
            'aria-pressed': view === chosen.view ? 'true' : 'false',
            onclick: () => {
              chosen = { ...chosen, view };
              drawTabs();
              void refreshList();
            },
          },
          label,
        ),
      ),
    );
  const refreshList = coalesced(
    async () => {
      const query = `view=${chosen.view}${chosen.q ? `&q=${encodeURIComponent(chosen.q)}` : ''}`;
      const rows = (await api.get<InboxRow[]>(`/accounts/${accountId}/inbox?${query}`)).data;
      const unread = rows.reduce((n, r) => n + r.unread, 0);
      document.title = unread > 0 ? `(${unread}) Inbox · Palaver dashboard` : 'Inbox · Palaver dashboard';
      show(
        list,
        ...(rows.length === 0
          ? [h('li', { class: 'empty' }, 'No conversations here.')]
          : rows.map((row) =>
              h(
                'li',
                { class: row.user.id === userId ? 'current' : '' },
                h(
                  'a',
                  { href: `#/accounts/${accountId}/inbox/${row.user.id}`, 'aria-current': row.user.id === userId ? 'page' : null },
                  h('strong', {}, customerName(row.user)),
                  row.unread > 0 ? badge(`${row.unread} unread`, 'warn') : null,
                  h(
                    'span',
                    { class: 'hint' },
                    `${waited(row.state.waitingSince)} · ${row.state.status} · ${services.get(row.state.ownerServiceId) ?? 'Service'} · assigned to ${operatorName(row.state.assigneeId)}`,
                  ),
                ),
              ),
            )),
      );
    },
    (err) => say(listStatus, errorText(err), 'error'),
  );
  searchForm.addEventListener('submit', (event) => {
    event.preventDefault();
    chosen = { ...chosen, q: search.value.trim() };
    void refreshList();
  });
  drawTabs();

  const view = h('section', { class: 'card conversation', 'aria-label': 'Conversation' });
  const side = h('aside', { class: 'card customer', 'aria-label': 'Customer' });
  let canned: CannedReply[] = [];

  const refreshConversation = coalesced(
    async () => {
      if (userId === undefined) return;
      const [messages, lines, users] = await Promise.all([
        api.get<ChatMessage[]>(`/accounts/${accountId}/users/${userId}/messages?limit=100`),
        api.get<TimelineLine[]>(`/accounts/${accountId}/users/${userId}/timeline?limit=100`),
        api.get<UserSummary[]>(`/accounts/${accountId}/users?limit=1&before=${userId + 1}`),
      ]);
      const state = lines.state as State;
      const user = users.data.find((u) => u.id === userId);
      drawConversation(userId, messages.data, lines.data, state, user);
      const newest = messages.data[0];
      if (newest && newest.id > state.readMessageId) {
        await api.put(`/accounts/${accountId}/users/${userId}/read`, { messageId: newest.id });
        void refreshList();
      }
    },
    (err) => show(view, h('p', { role: 'alert', class: 'status error' }, errorText(err))),
  );

  // The composer: kept across redraws so a live change does not take what the operator types.
  const text = h('textarea', { name: 'reply', rows: 3 });
  const noteMode = h('input', { type: 'checkbox', name: 'note' });
  const send = h('button', { type: 'submit' }, 'Send');
  const suggestions = h('ul', { class: 'plain suggestions', 'aria-label': 'Canned replies' });
  const composerStatus = statusLine();
  const composer = h(
    'form',
    { class: 'composer' },
    field('Reply', text, 'Enter sends, Shift+Enter starts a new line, / offers canned replies.'),
    suggestions,
    h('div', { class: 'row' }, h('label', { class: 'check' }, noteMode, 'Private note (only operators see it)'), send),
    composerStatus,
  );
  let typingSent = 0;
  const drawSuggestions = () => {
    const typed = /^\/(\S*)$/.exec(text.value);
    const matching = typed ? canned.filter((c) => c.shortcut.startsWith(typed[1] ?? '')) : [];
    show(
      suggestions,
      ...matching.map((c) =>
        h(
          'li',
          {},
          h(
            'button',
            {
              type: 'button',
              class: 'secondary small',
              onclick: () => {
                text.value = c.text;
                show(suggestions);
                text.focus();
              },
            },
            `/${c.shortcut}: ${c.text}`,
          ),
        ),
      ),
    );
  };
  text.addEventListener('input', () => {
    drawSuggestions();
    // The customer sees the operator typing (agent typing), told at most every 3 s.
    if (userId !== undefined && !noteMode.checked && text.value !== '' && Date.now() - typingSent > 3000) {
      typingSent = Date.now();
      void api.post(`/accounts/${accountId}/users/${userId}/typing`, { isTyping: true }).catch(() => undefined);
    }
  });
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
  composer.addEventListener('submit', (event) => {
    event.preventDefault();
    const body = text.value.trim();
    if (userId === undefined || body === '') return;
    void busy(send, composerStatus, async () => {
      if (noteMode.checked) await api.post(`/accounts/${accountId}/users/${userId}/notes`, { text: body });
      else await api.post(`/accounts/${accountId}/users/${userId}/messages`, { message: body });
      text.value = '';
      typingSent = 0;
      show(suggestions);
      await refreshConversation();
    });
  });

  const timelineList = h('ol', { class: 'messages', 'aria-label': 'Timeline', 'aria-live': 'polite', tabindex: 0 });
  const heading = h('div', {});

  function control(label: string, action: () => Promise<unknown>, status: HTMLElement): HTMLButtonElement {
    const button = h('button', { type: 'button', class: 'secondary', disabled: !mayReply }, label);
    button.addEventListener(
      'click',
      () =>
        void busy(button, status, async () => {
          await action();
          await Promise.all([refreshConversation(), refreshList()]);
        }),
    );
    return button;
  }

  function drawConversation(id: number, messages: ChatMessage[], lines: TimelineLine[], state: State, user: UserSummary | undefined): void {
    const status = statusLine();
    const path = `/accounts/${accountId}/users/${id}`;
    const mine = state.assigneeId === ctx.me.id;
    const controls = h(
      'div',
      { class: 'row controls' },
      mine
        ? control('Unassign', () => api.put(`${path}/assignee`, { assigneeId: null, expectedAssigneeId: state.assigneeId }), status)
        : control(
            'Assign to me',
            () => api.put(`${path}/assignee`, { assigneeId: ctx.me.id, expectedAssigneeId: state.assigneeId }),
            status,
          ),
      state.status === 'resolved'
        ? control('Reopen', () => api.put(`${path}/status`, { status: 'open', expectedStatus: state.status }), status)
        : control('Resolve', () => api.put(`${path}/status`, { status: 'resolved', expectedStatus: state.status }), status),
      state.status === 'resolved'
        ? null
        : control(
            'Snooze 1 hour',
            () => api.put(`${path}/status`, { status: 'snoozed', snoozedUntil: new Date(Date.now() + 3_600_000).toISOString() }),
            status,
          ),
      inbox && state.ownerServiceId !== inbox.id ? control('Take over', () => api.post(`${path}/take-over`), status) : null,
    );
    show(
      heading,
      h('h2', {}, user ? customerName(user) : `User ${id}`),
      h(
        'p',
        { class: 'hint' },
        `${state.status}${state.snoozedUntil ? ` until ${formatTime(state.snoozedUntil)}` : ''} · assigned to ${operatorName(state.assigneeId)} · owner ${services.get(state.ownerServiceId) ?? 'Service'}`,
      ),
      controls,
      status,
    );
    type Entry = { at: number; el: HTMLElement };
    const entries: Entry[] = [
      ...messages.map((m) => {
        const who = m.typeId === 1 ? 'user' : m.typeId === 2 ? 'agent' : 'system';
        return {
          at: m.time * 1000,
          el: h(
            'li',
            { class: `message ${who}` },
            h('span', { class: 'author' }, who === 'agent' ? (m.agent?.name ?? 'Agent') : who === 'user' ? 'Customer' : 'System'),
            m.message ? h('span', { class: 'text' }, m.message) : m.media ? h('span', { class: 'text' }, '[file]') : null,
            h('time', { class: 'hint' }, formatTime(m.time)),
          ),
        };
      }),
      ...lines.map((line) => ({
        at: Date.parse(line.createdAt),
        el:
          line.kind === 'note'
            ? h(
                'li',
                { class: 'message note' },
                h('span', { class: 'author' }, `Note by ${operatorName(line.operatorId)}`),
                h('span', { class: 'text' }, line.text ?? ''),
                h('time', { class: 'hint' }, formatTime(line.createdAt)),
              )
            : h(
                'li',
                { class: 'message line' },
                h(
                  'span',
                  { class: 'text' },
                  line.kind === 'assignee'
                    ? `${line.operatorId === null ? 'The customer' : operatorName(line.operatorId)} assigned it to ${operatorName((line.data?.to as number | null) ?? null)}`
                    : `${line.operatorId === null ? 'The customer wrote: reopened' : `${operatorName(line.operatorId)} set it ${String(line.data?.to)}`}`,
                ),
                h('time', { class: 'hint' }, formatTime(line.createdAt)),
              ),
      })),
    ].sort((a, b) => a.at - b.at);
    show(timelineList, ...entries.map((e) => e.el));
    timelineList.scrollTop = timelineList.scrollHeight;
    const info = Object.entries(user?.additionalInformation ?? {});
    show(
      side,
      h('h2', {}, 'Customer'),
      h(
        'dl',
        {},
        h('dt', {}, 'Identifier'),
        h('dd', {}, user?.uniqueIdentifier ?? 'anonymous'),
        ...info.flatMap(([key, value]) => [h('dt', {}, key), h('dd', {}, typeof value === 'string' ? value : JSON.stringify(value))]),
        h('dt', {}, 'Owner'),
        h('dd', {}, services.get(state.ownerServiceId) ?? 'Service'),
        h('dt', {}, 'First seen'),
        h('dd', {}, user ? formatTime(user.createdAt) : '—'),
      ),
    );
  }

  if (userId === undefined) show(view, h('p', { class: 'empty' }, 'Choose a conversation.'));
  else
    show(
      view,
      heading,
      timelineList,
      mayReply ? composer : h('p', { class: 'hint' }, 'Answering needs the conversations:reply permission.'),
    );
  show(
    ctx.main,
    h(
      'p',
      { class: 'crumbs' },
      h('a', { href: '#/accounts' }, 'Accounts'),
      ' / ',
      h('a', { href: `#/accounts/${accountId}` }, account.name),
      ' / Inbox',
    ),
    h('h1', {}, 'Inbox'),
    h('div', { class: 'row spread' }, tabs, searchForm),
    h(
      'div',
      { class: 'split inbox' },
      h('section', { class: 'card', 'aria-label': 'Inbox list' }, h('div', { class: 'conversation-list' }, list, listStatus)),
      view,
      userId === undefined ? null : side,
    ),
  );
  ctx.onLeave(
    onConversation((change) => {
      if (change.accountId !== accountId) return;
      void refreshList();
      if (change.userId === userId) void refreshConversation();
    }),
  );
  ctx.onLeave(() => {
    document.title = 'Palaver dashboard';
  });
  const [replies] = await Promise.all([
    api.get<CannedReply[]>(`/accounts/${accountId}/canned-replies`).catch(() => ({ data: [] as CannedReply[] })),
    refreshList(),
    refreshConversation(),
  ]);
  canned = replies.data;
}
