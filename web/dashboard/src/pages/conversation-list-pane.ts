// The conversations page's list pane: the account's conversations by last activity, drawn from
// what LoadedConversations holds, with "Show more" and the scroll position kept between visits.
import { coalesced } from '../coalesce.ts';
import { customerName } from '../customer-name.ts';
import { formatTime, h, show } from '../dom.ts';
import type { Conversation } from '../types.ts';
import { busy, errorText, say, statusLine } from '../ui.ts';
import type { LoadedConversations } from './conversation-list.ts';

export interface ConversationListPane {
  /** The scrolling list, its "Show more" button and its status line. */
  element: HTMLElement;
  /** Draws what is loaded, where it was last scrolled to. */
  draw(): void;
  /** The first page read again (coalesced: live changes ask for it often). */
  refresh(): Promise<void>;
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
      h('strong', {}, customerName(user)),
      last ? h('span', { class: 'last' }, last.message ?? (last.image ? '[file]' : '')) : h('span', { class: 'last none' }, 'No messages'),
      h(
        'span',
        { class: 'hint' },
        `${services.get(user.ownerServiceId) ?? 'Service'}${user.agent ? ` · ${user.agent.name}` : ''}${last ? ` · ${formatTime(last.time)}` : ''}`,
      ),
    ),
  );
}

/** `services`: the names of the account's Services by id; `current`: the conversation open beside the list. */
export function conversationListPane(
  loaded: LoadedConversations,
  services: Map<number, string>,
  current: number | undefined,
): ConversationListPane {
  const list = h('ul', { class: 'plain users', 'aria-label': 'Users' });
  const more = h('button', { type: 'button', class: 'secondary' }, 'Show more conversations');
  const status = statusLine();
  const scroller = h('div', { class: 'conversation-list' }, list, more, status);
  scroller.addEventListener('scroll', () => {
    loaded.scrollTop = scroller.scrollTop;
  });

  const drawList = () => {
    const entries = loaded.all();
    const top = scroller.scrollTop;
    show(
      list,
      ...(entries.length === 0
        ? [h('li', { class: 'empty' }, 'No conversations yet.')]
        : entries.map((entry) => listEntry(loaded.accountId, services, current, entry))),
    );
    more.hidden = loaded.next === null;
    scroller.scrollTop = top;
  };
  more.addEventListener(
    'click',
    () =>
      void busy(more, status, async () => {
        await loaded.loadMore();
        drawList();
      }),
  );
  return {
    element: scroller,
    draw: () => {
      drawList();
      scroller.scrollTop = loaded.scrollTop;
    },
    refresh: coalesced(
      async () => {
        await loaded.refresh();
        drawList();
      },
      (err) => say(status, errorText(err), 'error'),
    ),
  };
}
