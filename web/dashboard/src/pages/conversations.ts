// The conversations page: the account's conversations (conversation-list-pane.ts) beside the one
// chosen, its head (conversation-heading.ts) over its messages (conversation-messages.ts), all
// read again when the live channel says they changed.
import { api } from '../api.ts';
import { coalesced } from '../coalesce.ts';
import { h, show } from '../dom.ts';
import { onConversation } from '../live.ts';
import { ConversationFiles } from '../media.ts';
import type { PageContext } from '../page.ts';
import type { AccountOverview, Agent, ChatMessage, UserSummary } from '../types.ts';
import { errorText } from '../ui.ts';
import { conversationHeading } from './conversation-heading.ts';
import { LoadedConversations } from './conversation-list.ts';
import { conversationListPane } from './conversation-list-pane.ts';
import { ConversationMessages, MESSAGES_PAGE } from './conversation-messages.ts';

/**
 * The list as loaded for the account last shown: kept while the operator moves between its
 * conversations. Only for the same sign-in (`me` is read again at each), so nobody else sees it.
 */
let kept: { me: PageContext['me']; list: LoadedConversations } | null = null;

/** Conversations of an account by last activity, live; with a user id, that conversation too. */
export async function conversationsPage(ctx: PageContext, accountId: number, userId?: number): Promise<void> {
  const account = (await api.get<AccountOverview>(`/accounts/${accountId}`)).data;
  const services = new Map([...account.services, ...(account.inbox ? [account.inbox] : [])].map((s) => [s.id, s.name]));
  const loaded = kept?.me === ctx.me && kept.list.accountId === accountId ? kept.list : new LoadedConversations(accountId);
  kept = { me: ctx.me, list: loaded };
  const pane = conversationListPane(loaded, services, userId);
  const view = h('section', { class: 'card conversation', 'aria-label': 'Conversation' });
  const files = new ConversationFiles(accountId);
  ctx.onLeave(() => files.release());

  const heading = h('div', {});
  const messages = userId === undefined ? null : new ConversationMessages(accountId, userId, files);
  const renderConversation = async (conversation: number) => {
    const [answer, users] = await Promise.all([
      api.get<ChatMessage[]>(`/accounts/${accountId}/users/${conversation}/messages?limit=${MESSAGES_PAGE}`),
      api.get<UserSummary[]>(`/accounts/${accountId}/users?limit=1&before=${conversation + 1}`),
    ]);
    show(
      heading,
      ...conversationHeading(ctx, {
        account,
        services,
        userId: conversation,
        user: users.data.find((u) => u.id === conversation),
        agent: answer.agent as Agent | null,
        erased: () => {
          loaded.forget(conversation);
          location.hash = `#/accounts/${accountId}/conversations`;
        },
        ownerChanged: async () => {
          await Promise.all([pane.refresh(), refreshConversation()]);
        },
      }),
    );
    messages?.newestPage(answer.data, (answer.paging as { before: number | null }).before);
  };
  const refreshConversation = coalesced(
    async () => {
      if (userId !== undefined) await renderConversation(userId);
    },
    (err) => show(heading, h('p', { role: 'alert', class: 'status error' }, errorText(err))),
  );

  if (!messages) show(view, h('p', { class: 'empty' }, 'Choose a conversation.'));
  else show(view, heading, ...messages.elements);
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
    h('div', { class: 'split' }, h('section', { class: 'card', 'aria-label': 'Conversation list' }, pane.element), view),
  );
  // What was loaded before (another conversation of the account) at once, where it was scrolled to.
  pane.draw();
  // Listening before the first reads: a change while they run is read after them.
  ctx.onLeave(
    onConversation((change) => {
      if (change.accountId !== accountId) return;
      void pane.refresh();
      if (change.userId === userId) void refreshConversation();
    }),
  );
  await Promise.all([pane.refresh(), refreshConversation()]);
  // In one column (narrow screens) the conversation is under the list: a chosen one is brought into view.
  if (userId !== undefined && matchMedia('(max-width: 1000px)').matches) view.scrollIntoView({ block: 'start' });
}
