// The conversation list as loaded so far: pages of GET /accounts/{id}/conversations (by last
// activity), and the first page read again when something changed. Kept while the operator moves
// between conversations of the account, so pages loaded with "Show more" stay.
import { api } from '../api.ts';
import type { Conversation } from '../types.ts';

const PAGE = 50;

/** The server's order: by last message, newest first; without messages after, newest user first. */
function byActivity(a: Conversation, b: Conversation): number {
  if (a.lastMessage && b.lastMessage) return b.lastMessage.id - a.lastMessage.id;
  if (a.lastMessage || b.lastMessage) return a.lastMessage ? -1 : 1;
  return b.user.id - a.user.id;
}

export class LoadedConversations {
  private readonly entries = new Map<number, Conversation>();
  /** The cursor of the next page; null when there is none. */
  next: string | null = null;
  /** Whether pages past the first were loaded: then the first page's cursor no longer says where to go on. */
  private pastFirst = false;
  /** The list's scroll position, to come back to it. */
  scrollTop = 0;

  constructor(readonly accountId: number) {}

  all(): Conversation[] {
    return [...this.entries.values()].sort(byActivity);
  }

  /**
   * The first page again: the whole truth from the top down to its last entry. A conversation only
   * moves up (a new message) or goes away (merged, erased), so what was loaded there and is not in
   * the page is gone; what is below keeps its place.
   */
  async refresh(): Promise<void> {
    const answer = await api.get<Conversation[]>(`/accounts/${this.accountId}/conversations?limit=${PAGE}`);
    const next = (answer.paging as { before: string | null }).before;
    const last = answer.data[answer.data.length - 1];
    for (const [id, entry] of this.entries) if (next === null || !last || byActivity(entry, last) <= 0) this.entries.delete(id);
    for (const entry of answer.data) this.entries.set(entry.user.id, entry);
    // A complete first page holds every conversation: nothing more to load.
    if (next === null) this.pastFirst = false;
    if (!this.pastFirst) this.next = next;
  }

  async loadMore(): Promise<void> {
    if (this.next === null) return;
    const answer = await api.get<Conversation[]>(
      `/accounts/${this.accountId}/conversations?limit=${PAGE}&before=${encodeURIComponent(this.next)}`,
    );
    for (const entry of answer.data) this.entries.set(entry.user.id, entry);
    this.next = (answer.paging as { before: string | null }).before;
    this.pastFirst = true;
  }

  forget(userId: number): void {
    this.entries.delete(userId);
  }
}
