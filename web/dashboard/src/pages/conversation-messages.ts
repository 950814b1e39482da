// The messages of the conversation open on the conversations page. The list stays in the page
// across live updates (only new messages are added), so its scroll position and loaded images
// stay. It follows the newest message while pinned: on opening, and while the operator is at the
// bottom; scrolled up, the view stays where it is.
import { api } from '../api.ts';
import { formatTime, h, show } from '../dom.ts';
import type { ConversationFiles } from '../media.ts';
import type { ChatMessage } from '../types.ts';
import { busy, statusLine } from '../ui.ts';

const TYPE_NAMES: Record<number, string> = { 1: 'user', 2: 'agent', 3: 'system', 4: 'system', 5: 'system' };
/** Messages a read: the newest when a conversation opens or changes, then older ones on request. */
export const MESSAGES_PAGE = 200;

/** Near enough to the end of a scroller to count as reading the newest message. */
function atBottom(scroller: HTMLElement): boolean {
  return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 24;
}

export class ConversationMessages {
  /** "Show older messages", its status line and the list, in the order they are shown. */
  readonly elements: HTMLElement[];
  // Focusable: it scrolls, and a keyboard user scrolls it with the arrow keys.
  private readonly list = h('ol', { class: 'messages', 'aria-label': 'Messages', 'aria-live': 'polite', tabindex: 0 });
  private readonly drawn = new Map<number, HTMLElement>();
  private pinned = true;
  /**
   * Every message read for this conversation, the newest page (read again on every change) and
   * the older pages loaded with "Show older messages": kept across live updates.
   */
  private readonly known = new Map<number, ChatMessage>();
  /** Where the next older page starts; null when the oldest message is shown. */
  private olderThan: number | null = null;
  private readonly olderButton = h('button', { type: 'button', class: 'secondary small older' }, 'Show older messages');

  constructor(
    private readonly accountId: number,
    private readonly userId: number,
    private readonly files: ConversationFiles,
  ) {
    const olderStatus = statusLine();
    this.elements = [this.olderButton, olderStatus, this.list];
    this.olderButton.hidden = true;
    this.list.addEventListener('scroll', () => {
      this.pinned = atBottom(this.list);
    });
    // An image takes its height when it has loaded, after the list was scrolled.
    this.list.addEventListener(
      'load',
      () => {
        if (this.pinned) this.toBottom();
      },
      true,
    );
    this.olderButton.addEventListener(
      'click',
      () =>
        void busy(this.olderButton, olderStatus, async () => {
          if (this.olderThan === null) return;
          const page = await api.get<ChatMessage[]>(
            `/accounts/${this.accountId}/users/${this.userId}/messages?limit=${MESSAGES_PAGE}&before=${this.olderThan}`,
          );
          for (const m of page.data) this.known.set(m.id, m);
          this.olderThan = (page.paging as { before: number | null }).before;
          this.draw({ prepended: true });
        }),
    );
  }

  /** The newest page as read now (`before`: its paging cursor), joined to what is known and drawn. */
  newestPage(messages: ChatMessage[], before: number | null): void {
    const newestKnown = Math.max(0, ...this.known.keys());
    // The first read, or more messages came since the last one than a page holds: what is known
    // no longer joins the newest page, so the view starts again from it (older ones on request).
    if (this.known.size === 0 || (before !== null && before > newestKnown)) {
      this.known.clear();
      this.olderThan = before;
    }
    for (const m of messages) this.known.set(m.id, m);
    this.draw();
  }

  private toBottom(): void {
    this.list.scrollTop = this.list.scrollHeight;
  }

  private draw({ prepended = false } = {}): void {
    const list = this.list;
    const messages = [...this.known.values()].sort((a, b) => a.id - b.id);
    const top = list.scrollTop;
    // Older messages go above: what the operator was reading stays where it was on screen.
    const fromBottom = list.scrollHeight - top;
    const listTop = list.getBoundingClientRect().top;
    const stay = this.pinned && !prepended;
    show(
      list,
      ...messages.map((m) => {
        const existing = this.drawn.get(m.id);
        if (existing) return existing;
        const who = TYPE_NAMES[m.typeId] ?? 'system';
        const item = h(
          'li',
          { class: `message ${who}` },
          h('span', { class: 'author' }, who === 'agent' ? (m.agent?.name ?? 'Agent') : who === 'user' ? 'User' : 'System'),
          m.message ? h('span', { class: 'text' }, m.message) : null,
          m.media ? this.files.view(m.media) : null,
          h('time', { class: 'hint' }, formatTime(m.time)),
        );
        this.drawn.set(m.id, item);
        return item;
      }),
    );
    this.olderButton.hidden = this.olderThan === null;
    // The button above comes or goes: the list moves on the page by as much, and its content with it.
    const moved = list.getBoundingClientRect().top - listTop;
    if (stay) this.toBottom();
    else if (prepended) list.scrollTop = list.scrollHeight - fromBottom + moved;
    else list.scrollTop = top + moved;
  }
}
