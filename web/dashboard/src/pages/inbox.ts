// The team inbox (docs/dashboard.md): the views of the account's conversations (mine,
// unassigned, all open, bots, resolved) and search; a conversation's timeline (messages, private
// notes, status lines) with a composer (Enter sends, Shift+Enter a new line, a note mode, `/`
// canned replies), assign, resolve, snooze and take-over controls, and who the customer is. Live
// through the /operators channel: a change re-reads what it names; the customer's typing shows
// as it happens. Keys (outside a text field): j/k or the arrow keys the next/previous
// conversation, r reply, e resolve (or reopen), Escape leaves the composer. Opt-in desktop
// notifications and a short sound for a new customer message in a conversation that is mine or
// unassigned. Below 1000 px one column: the list, or the conversation with a way back.
import { ApiError, api } from '../api.ts';
import { coalesced } from '../coalesce.ts';
import { customerName } from '../customer-name.ts';
import { field, formatTime, h, show } from '../dom.ts';
import { onConversation } from '../live.ts';
import type { PageContext } from '../page.ts';
import { can } from '../permissions.ts';
import type { AccountOverview, ChatMessage, UserSummary } from '../types.ts';
import { badge, busy, errorText, say, statusLine } from '../ui.ts';
import { contactRows, type ContactView } from './contact-details.ts';
import { switchboardLine } from './switchboard.ts';

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

interface NamedOperator {
  id: number;
  name: string;
  avatarUrl: string | null;
}

interface CustomerDevice {
  type: 'android' | 'ios' | 'web' | 'generic';
  version: string | null;
  pageAddress: string | null;
  createdAt: string;
}

interface CannedReply {
  id: number;
  shortcut: string;
  text: string;
}

/** The view and search chosen, kept while the operator moves between conversations. */
let chosen: { view: View; q: string } = { view: 'unassigned', q: '' };
/** Operators' names as the answers named them (assignees, note authors), kept across pages. */
const operatorNames = new Map<number, string>();
/** Set when a key moved to another conversation: the new page puts focus back in the list. */
let focusListAfterDraw = false;
/** The newest customer message already notified, per conversation (no second notification on a re-read). */
const notified = new Map<number, number>();
const NOTIFY_KEY = 'palaver.inbox.notify';

function notificationsOn(): boolean {
  return 'Notification' in window && Notification.permission === 'granted' && localStorage.getItem(NOTIFY_KEY) === 'on';
}

/** A short two-tone chime (Web Audio: no file to load). */
function chime(): void {
  try {
    const audio = new AudioContext();
    const gain = audio.createGain();
    gain.gain.setValueAtTime(0.08, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.0001, audio.currentTime + 0.35);
    gain.connect(audio.destination);
    [880, 1320].forEach((hz, i) => {
      const tone = audio.createOscillator();
      tone.frequency.value = hz;
      tone.connect(gain);
      tone.start(audio.currentTime + i * 0.12);
      tone.stop(audio.currentTime + 0.35);
    });
    setTimeout(() => void audio.close(), 600);
  } catch {
    // No sound where audio is not allowed.
  }
}

function remember(operators: unknown): void {
  if (!Array.isArray(operators)) return;
  for (const o of operators as NamedOperator[]) operatorNames.set(o.id, o.name);
}

const DEVICE_NAMES: Record<CustomerDevice['type'], string> = { android: 'Android', ios: 'iOS', web: 'Web', generic: 'Other' };

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
  const operatorName = (id: number | null) =>
    id === null ? 'nobody' : id === ctx.me.id ? 'you' : (operatorNames.get(id) ?? `operator ${id}`);

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
  // An empty view says where the rest are: a newcomer's first conversations are often a bot's.
  const emptyList = () =>
    h(
      'li',
      { class: 'empty' },
      'No conversations here.',
      chosen.view === 'bots' || chosen.q
        ? null
        : h(
            'p',
            { class: 'hint' },
            'Conversations a bot answers are under Bots: take one over to answer it here. ',
            h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                onclick: () => {
                  chosen = { ...chosen, view: 'bots' };
                  drawTabs();
                  void refreshList();
                },
              },
              "Show the bots' conversations",
            ),
          ),
    );
  const refreshList = coalesced(
    async () => {
      const query = `view=${chosen.view}${chosen.q ? `&q=${encodeURIComponent(chosen.q)}` : ''}`;
      const answer = await api.get<InboxRow[]>(`/accounts/${accountId}/inbox?${query}`);
      remember(answer.operators);
      const rows = answer.data;
      const unread = rows.reduce((n, r) => n + r.unread, 0);
      document.title = unread > 0 ? `(${unread}) Inbox · Palaver dashboard` : 'Inbox · Palaver dashboard';
      show(
        list,
        ...(rows.length === 0
          ? [emptyList()]
          : rows.map((row) =>
              h(
                'li',
                { class: row.user.id === userId ? 'current' : '', 'data-user': String(row.user.id) },
                h(
                  'a',
                  { href: `#/accounts/${accountId}/inbox/${row.user.id}`, 'aria-current': row.user.id === userId ? 'page' : null },
                  h('strong', {}, customerName(row.user)),
                  row.unread > 0 ? badge(`${row.unread} unread`, 'warn') : null,
                  h('span', { class: 'hint' }, `${row.state.status} · ${services.get(row.state.ownerServiceId) ?? 'Service'}`),
                  h('span', { class: 'hint' }, `${waited(row.state.waitingSince)} · assigned to ${operatorName(row.state.assigneeId)}`),
                ),
              ),
            )),
      );
      if (focusListAfterDraw) {
        focusListAfterDraw = false;
        list.querySelector<HTMLAnchorElement>('li.current a')?.focus();
      }
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
      remember(lines.operators);
      const user = users.data.find((u) => u.id === userId);
      drawConversation(userId, messages.data, lines.data, state, user, (lines.devices as CustomerDevice[] | undefined) ?? []);
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
  // A file goes with the answer (uploaded first, then named by the message), never with a note.
  const attachment = h('input', { type: 'file', name: 'attachment' });
  const suggestions = h('ul', { class: 'plain suggestions', 'aria-label': 'Canned replies' });
  const composerStatus = statusLine();
  const composer = h(
    'form',
    { class: 'composer' },
    field('Reply', text, 'Enter sends, Shift+Enter starts a new line, / offers canned replies.'),
    suggestions,
    field('Attach a file', attachment, 'Sent with the answer: pictures, PDF and other documents, audio, video.'),
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
    const file = noteMode.checked ? undefined : attachment.files?.[0];
    if (userId === undefined || (body === '' && !file)) return;
    void busy(send, composerStatus, async () => {
      if (noteMode.checked) await api.post(`/accounts/${accountId}/users/${userId}/notes`, { text: body });
      else {
        const media = file ? (await api.upload<{ media: string }>(`/accounts/${accountId}/users/${userId}/media`, file)).data.media : null;
        await api.post(`/accounts/${accountId}/users/${userId}/messages`, {
          ...(body === '' ? {} : { message: body }),
          ...(media ? { media: { id: media } } : {}),
        });
        attachment.value = '';
      }
      text.value = '';
      typingSent = 0;
      show(suggestions);
      await refreshConversation();
    });
  });

  const timelineList = h('ol', { class: 'messages', 'aria-label': 'Timeline', 'aria-live': 'polite', tabindex: 0 });
  // The customer's typing and chat opened (told only while the inbox owns the conversation).
  const customerActivity = h('p', { class: 'hint activity', role: 'status' });
  let typingTimer: ReturnType<typeof setTimeout> | undefined;
  const customerTyping = (typing: boolean) => {
    clearTimeout(typingTimer);
    customerActivity.textContent = typing ? 'The customer is typing…' : '';
    // A stopTyping may never come (the customer closed the page): it fades after 15 s.
    if (typing) typingTimer = setTimeout(() => customerTyping(false), 15_000);
  };
  const heading = h('div', {});

  // Kept across redraws: a refusal stays said after the conversation is read again.
  const controlsStatus = statusLine();
  function control(label: string, action: () => Promise<unknown>, status: HTMLElement): HTMLButtonElement {
    const button = h('button', { type: 'button', class: 'secondary', disabled: !mayReply }, label);
    button.addEventListener(
      'click',
      () =>
        void busy(button, status, async () => {
          say(status, '');
          try {
            await action();
          } catch (err) {
            // Someone else changed it first (409): show what it is now, and say so.
            if (!(err instanceof ApiError && err.status === 409)) throw err;
            await Promise.all([refreshConversation(), refreshList()]);
            // eslint-disable-next-line preserve-caught-error -- the expected 409, said in words
            throw new Error(
              `Changed meanwhile: it is ${current?.status ?? 'changed'}, assigned to ${operatorName(current?.assigneeId ?? null)}.`,
            );
          }
          await Promise.all([refreshConversation(), refreshList()]);
        }),
    );
    return button;
  }

  // Back to a bot (a webhook Service): PUT …/owner naming it, as the bot's own handover is.
  const bots = account.services.filter((service) => service.kind !== 'inbox' && service.enabled);
  const mayHandBack = can(ctx.me.grants, 'services:edit', accountId);
  function handBack(path: string, status: HTMLElement): HTMLElement {
    const to = h('select', { name: 'bot' }, ...bots.map((bot) => h('option', { value: bot.identification }, bot.name)));
    const button = control('Hand over', () => api.put(`${path}/owner`, { serviceIdentification: to.value }), status);
    return h('div', { class: 'row handback' }, field('Hand back to', to), button);
  }

  const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
  function assigneeLine(line: TimelineLine): string {
    const by = line.operatorId === null ? 'the customer' : operatorName(line.operatorId);
    const to = (line.data?.to as number | null | undefined) ?? null;
    if (to !== null && to === line.operatorId) return `${capital(by)} took it`;
    if (to === null) return `${capital(by)} unassigned it`;
    return `${capital(by)} assigned it to ${operatorName(to)}`;
  }

  let current: State | null = null;
  function drawConversation(
    id: number,
    messages: ChatMessage[],
    lines: TimelineLine[],
    state: State,
    user: UserSummary | undefined,
    devices: CustomerDevice[],
  ): void {
    current = state;
    const status = controlsStatus;
    const path = `/accounts/${accountId}/users/${id}`;
    const mine = state.assigneeId === ctx.me.id;
    const mayAssign = state.assigneeId === null || can(ctx.me.grants, 'conversations:assign', accountId);
    const controls = h(
      'div',
      { class: 'row controls' },
      mine
        ? control('Unassign', () => api.put(`${path}/assignee`, { assigneeId: null, expectedAssigneeId: state.assigneeId }), status)
        : !mayAssign
          ? null
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
      inbox && state.ownerServiceId === inbox.id && bots.length > 0 && mayHandBack ? handBack(path, status) : null,
    );
    show(
      heading,
      h('h2', {}, user ? customerName(user) : `User ${id}`),
      h(
        'p',
        { class: 'hint' },
        `${state.status}${state.snoozedUntil ? ` until ${formatTime(state.snoozedUntil)}` : ''} · assigned to ${operatorName(state.assigneeId)} · owner ${services.get(state.ownerServiceId) ?? 'Service'}`,
      ),
      switchboardLine(path),
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
                    ? assigneeLine(line)
                    : `${line.operatorId === null ? 'The customer wrote: reopened' : `${capital(operatorName(line.operatorId))} set it ${String(line.data?.to)}`}`,
                ),
                h('time', { class: 'hint' }, formatTime(line.createdAt)),
              ),
      })),
    ].sort((a, b) => a.at - b.at);
    show(timelineList, ...entries.map((e) => e.el));
    timelineList.scrollTop = timelineList.scrollHeight;
    const info = Object.entries(user?.additionalInformation ?? {});
    // A conversation resolved before is an earlier conversation of this customer.
    const resolutions = lines.filter((line) => line.kind === 'status' && line.data?.to === 'resolved');
    const earlier = state.status === 'resolved' ? resolutions.slice(1) : resolutions;
    show(
      side,
      h('h2', {}, 'Customer'),
      h(
        'dl',
        {},
        h('dt', {}, 'Identifier'),
        h('dd', {}, user?.uniqueIdentifier ?? 'anonymous'),
        ...contactRows((user as { contact?: ContactView | null } | undefined)?.contact),
        ...info.flatMap(([key, value]) => [h('dt', {}, key), h('dd', {}, typeof value === 'string' ? value : JSON.stringify(value))]),
        ...(devices[0]
          ? [
              h('dt', {}, 'Page address'),
              h('dd', {}, devices[0].pageAddress ?? '—'),
              h('dt', {}, 'Device'),
              h('dd', {}, `${DEVICE_NAMES[devices[0].type]}${devices[0].version ? ` ${devices[0].version}` : ''}`),
            ]
          : []),
        h('dt', {}, 'First seen'),
        h('dd', {}, user ? formatTime(user.createdAt) : '—'),
        h('dt', {}, 'Owner'),
        h('dd', {}, services.get(state.ownerServiceId) ?? 'Service'),
        h('dt', {}, 'Earlier conversations'),
        h(
          'dd',
          {},
          earlier.length === 0
            ? 'none'
            : h('ul', { class: 'plain' }, ...earlier.map((line) => h('li', {}, `resolved ${formatTime(line.createdAt)}`))),
        ),
      ),
    );
  }

  // Opt-in desktop notifications (and a chime) for a new customer message in a conversation that
  // is mine or unassigned, in the team's hands.
  const notifyControl = h('div', { class: 'row notify' });
  const drawNotifyControl = () => {
    if (!('Notification' in window)) return show(notifyControl);
    if (notificationsOn())
      return show(
        notifyControl,
        h('span', { class: 'hint' }, 'Desktop notifications and sound are on.'),
        h(
          'button',
          {
            type: 'button',
            class: 'secondary small',
            onclick: () => {
              localStorage.setItem(NOTIFY_KEY, 'off');
              drawNotifyControl();
            },
          },
          'Turn off',
        ),
      );
    if (Notification.permission === 'denied')
      return show(notifyControl, h('span', { class: 'hint' }, 'Desktop notifications are blocked in this browser.'));
    show(
      notifyControl,
      h(
        'button',
        {
          type: 'button',
          class: 'secondary small',
          onclick: () => {
            // Asked on the operator's click (browsers refuse a request without one).
            void (Notification.permission === 'granted' ? Promise.resolve('granted') : Notification.requestPermission()).then((answer) => {
              if (answer === 'granted') localStorage.setItem(NOTIFY_KEY, 'on');
              drawNotifyControl();
            });
          },
        },
        'Notify me of new messages',
      ),
    );
  };
  drawNotifyControl();
  const maybeNotify = async (id: number) => {
    if (!notificationsOn() || !inbox) return;
    if (id === userId && document.hasFocus()) return;
    const [messages, lines] = await Promise.all([
      api.get<ChatMessage[]>(`/accounts/${accountId}/users/${id}/messages?limit=1`),
      api.get<TimelineLine[]>(`/accounts/${accountId}/users/${id}/timeline?limit=1`),
    ]).catch(() => [null, null] as const);
    const newest = messages?.data[0];
    const state = lines?.state as State | undefined;
    if (!newest || !state || newest.typeId !== 1 || newest.id <= (notified.get(id) ?? state.readMessageId)) return;
    if (state.ownerServiceId !== inbox.id || (state.assigneeId !== null && state.assigneeId !== ctx.me.id)) return;
    notified.set(id, newest.id);
    const shown = new Notification(state.assigneeId === null ? 'New message (unassigned)' : 'New message', {
      body: newest.message ?? 'A file',
      tag: `palaver-${accountId}-${id}`,
    });
    shown.onclick = () => {
      window.focus();
      location.hash = `#/accounts/${accountId}/inbox/${id}`;
    };
    chime();
  };

  // The operator's own name and avatar, which customers see with each answer (PATCH /session).
  const profileName = h('input', { name: 'displayName', value: ctx.me.displayName ?? '', maxlength: 255 });
  const profileAvatar = h('input', { name: 'avatarUrl', type: 'url', value: ctx.me.avatarUrl ?? '', placeholder: 'https://…' });
  const profileSave = h('button', { type: 'submit', class: 'secondary small' }, 'Save');
  const profileStatus = statusLine();
  const profileSummary = h('summary', {});
  const drawProfileSummary = () => {
    profileSummary.textContent = `Customers see you as: ${ctx.me.displayName ?? ctx.me.email.split('@')[0] ?? ctx.me.email}`;
  };
  drawProfileSummary();
  const profileForm = h(
    'form',
    { class: 'row profile-form' },
    field('Your name for customers', profileName),
    field('Avatar (an https address)', profileAvatar),
    profileSave,
  );
  profileForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(profileSave, profileStatus, async () => {
      const answer = await api.patch<{ displayName: string | null; avatarUrl: string | null }>('/session', {
        displayName: profileName.value.trim() || null,
        avatarUrl: profileAvatar.value.trim() || null,
      });
      ctx.me.displayName = answer.data.displayName;
      ctx.me.avatarUrl = answer.data.avatarUrl;
      drawProfileSummary();
      say(profileStatus, 'Saved.');
    });
  });
  const profile = h('details', { class: 'profile' }, profileSummary, profileForm, profileStatus);

  // Keys, outside a text field: move between conversations, reply, resolve.
  const move = (step: number) => {
    const links = [...list.querySelectorAll<HTMLAnchorElement>('li[data-user] a')];
    if (links.length === 0) return;
    const at = links.findIndex((a) => a === document.activeElement || a.getAttribute('aria-current') === 'page');
    const next = links[at === -1 ? (step > 0 ? 0 : links.length - 1) : Math.min(links.length - 1, Math.max(0, at + step))];
    if (!next) return;
    focusListAfterDraw = true;
    if (next.getAttribute('aria-current') === 'page') next.focus();
    else location.hash = next.getAttribute('href') ?? '';
  };
  function onKey(event: KeyboardEvent): void {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    const target = event.target as HTMLElement;
    const typing = target.closest('input, textarea, select, [contenteditable="true"]') !== null;
    if (typing) {
      if (event.key === 'Escape' && target === text) {
        event.preventDefault();
        text.blur();
        timelineList.focus();
      }
      return;
    }
    const inList = list.contains(target);
    if (event.key === 'j' || (inList && event.key === 'ArrowDown')) move(1);
    else if (event.key === 'k' || (inList && event.key === 'ArrowUp')) move(-1);
    else if (event.key === 'r' && userId !== undefined && mayReply) text.focus();
    else if (event.key === 'e' && userId !== undefined && current && mayReply) {
      const state = current;
      const to = state.status === 'resolved' ? 'open' : 'resolved';
      void api
        .put(`/accounts/${accountId}/users/${userId}/status`, { status: to, expectedStatus: state.status })
        .then(() => Promise.all([refreshConversation(), refreshList()]))
        .catch((err: unknown) => say(composerStatus, errorText(err), 'error'));
    } else return;
    event.preventDefault();
  }

  if (userId === undefined) show(view, h('p', { class: 'empty' }, 'Choose a conversation.'));
  else
    show(
      view,
      h('a', { href: `#/accounts/${accountId}/inbox`, class: 'back' }, '← All conversations'),
      heading,
      timelineList,
      customerActivity,
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
    h('div', { class: 'row spread' }, h('h1', {}, 'Inbox'), h('div', { class: 'row' }, profile, notifyControl)),
    h('div', { class: `row spread list-controls${userId === undefined ? '' : ' chosen'}` }, tabs, searchForm),
    h(
      'p',
      { class: 'hint keys' },
      'Keys: ',
      h('kbd', {}, 'j'),
      '/',
      h('kbd', {}, 'k'),
      ' or ',
      h('kbd', {}, '↓'),
      '/',
      h('kbd', {}, '↑'),
      ' next/previous conversation, ',
      h('kbd', {}, 'r'),
      ' reply, ',
      h('kbd', {}, 'e'),
      ' resolve or reopen, ',
      h('kbd', {}, 'Esc'),
      ' leaves the reply box.',
    ),
    h(
      'div',
      { class: `split inbox${userId === undefined ? '' : ' chosen'}` },
      h('section', { class: 'card', 'aria-label': 'Inbox list' }, h('div', { class: 'conversation-list' }, list, listStatus)),
      view,
      userId === undefined ? null : side,
    ),
  );
  ctx.onLeave(
    onConversation((change) => {
      if (change.accountId !== accountId) return;
      if (change.change === 'startTyping' || change.change === 'stopTyping' || change.change === 'chatOpened') {
        if (change.userId !== userId) return;
        if (change.change === 'chatOpened') {
          clearTimeout(typingTimer);
          customerActivity.textContent = `The customer opened the chat at ${formatTime(new Date().toISOString())}.`;
        } else customerTyping(change.change === 'startTyping');
        return;
      }
      if (change.change === 'message') {
        if (change.userId === userId) customerTyping(false);
        void maybeNotify(change.userId);
      }
      void refreshList();
      if (change.userId === userId) void refreshConversation();
    }),
  );
  ctx.onLeave(() => clearTimeout(typingTimer));
  ctx.onLeave(() => document.removeEventListener('keydown', onKey));
  document.addEventListener('keydown', onKey);
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
