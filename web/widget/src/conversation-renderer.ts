// Brings the view (ui/view.ts) in line with the conversation (conversation.ts): each entry drawn
// once (ui/message-view.ts), again only when it changed; the older-messages line, the sticky
// message, the agent in the header, the typing line and the quick replies.
import type { Conversation } from './conversation.ts';
import type { Settings } from './settings.ts';
import type { ChatMessage } from './types.ts';
import { h } from './ui/dom.ts';
import { avatar, renderMessage, renderOutgoing, type MessageActions } from './ui/message-view.ts';
import type { View } from './ui/view.ts';

/** What drawing reads of the widget's state beside the conversation. */
export interface RenderState {
  loadingOlder(): boolean;
  unavailable(): boolean;
  /** Outside business hours: the empty prompt says the answer may come later. */
  closed(): boolean;
  /** Draws what lives beside the conversation (the form and the hours notice, reach.ts). */
  drawBeside(): void;
}

function sameAgent(a: ChatMessage['agent'], b: ChatMessage['agent']): boolean {
  return a?.id === b?.id && a?.name === b?.name && (a?.avatar ?? null) === (b?.avatar ?? null);
}

export class ConversationRenderer {
  private readonly rendered = new Map<string, { node: HTMLLIElement; version: string }>();

  constructor(
    private readonly view: View,
    private readonly conversation: Conversation,
    private readonly settings: Settings,
    private readonly actions: MessageActions,
    private readonly state: RenderState,
  ) {}

  /**
   * Draws what changed. A control that had focus and is drawn no more (a quick reply once used,
   * a Retry once clicked) leaves focus in the composer, not on the host page under the dialog.
   */
  render(): void {
    const hadFocus = this.view.holdsFocus();
    this.draw();
    this.state.drawBeside();
    if (hadFocus && !this.view.holdsFocus()) this.view.focusComposer();
  }

  /** Forgets every entry drawn (another conversation is shown from now on). */
  reset(): void {
    this.rendered.clear();
    this.view.items.replaceChildren();
  }

  private draw(): void {
    const c = this.conversation;
    const s = this.settings.strings;
    const view = this.view;
    const unavailable = this.state.unavailable();
    const loadingOlder = this.state.loadingOlder();
    const entries = c.entries();
    const lastVisitor = [...c.messages.values()].filter((m) => m.typeId === 1).reduce((a, m) => Math.max(a, m.id), 0);
    const wanted: HTMLElement[] = [];
    if (c.olderThan === null && c.welcomeMessage)
      wanted.push(this.keyed('welcome', c.welcomeMessage, () => h('li', { class: 'welcome' }, c.welcomeMessage ?? '')));
    // Without a welcome message an empty conversation would be a blank panel: a prompt instead.
    else if (c.olderThan === null && entries.length === 0 && !unavailable) {
      const prompt = this.state.closed() ? s.emptyPromptClosed : s.emptyPrompt;
      wanted.push(this.keyed('prompt', prompt, () => h('li', { class: 'welcome' }, prompt)));
    }
    let previous: ChatMessage | undefined;
    for (const entry of entries) {
      if (entry.kind === 'message') {
        const m = entry.message;
        const showSeen = m.id === lastVisitor;
        // A run of one agent's messages names the agent once. Agents are told apart by id, name and
        // avatar together: a Service's agent ids and the team's operator ids are separate spaces.
        const follows = m.typeId === 2 && previous?.typeId === 2 && sameAgent(previous.agent, m.agent);
        previous = m;
        wanted.push(
          this.keyed(`m${m.id}`, `${m.status}:${showSeen}:${follows}`, () => renderMessage(m, this.actions, { showSeen, follows })),
        );
      } else {
        const o = entry.outgoing;
        wanted.push(this.keyed(`o${o.key}`, `${o.state}:${o.error}:${unavailable}`, () => renderOutgoing(o, this.actions)));
      }
    }
    const items = view.items;
    wanted.forEach((node, i) => {
      if (items.children[i] !== node) items.insertBefore(node, items.children[i] ?? null);
    });
    while (items.children.length > wanted.length) items.lastElementChild?.remove();

    view.older.hidden = !loadingOlder && c.olderThan !== null;
    view.older.textContent = loadingOlder ? s.loadingOlder : c.olderThan === null && c.messages.size > 0 ? s.startOfConversation : '';

    view.sticky.hidden = !c.stickyMessage;
    view.sticky.textContent = c.stickyMessage ?? '';

    const agent = c.agent;
    view.subtitle.textContent = agent ? agent.name : '';
    view.subtitle.hidden = !agent;
    view.headerAvatar.replaceChildren(...(agent ? [avatar(agent, s.agentFallback)] : []));
    view.headerAvatar.hidden = !agent;

    const typing = c.typing;
    view.typing.replaceChildren(
      ...(typing
        ? [h('span', { class: 'dots', 'aria-hidden': 'true' }, h('i'), h('i'), h('i')), s.typing(typing.name || s.agentFallback)]
        : []),
    );

    const last = c.last();
    const replies = last && c.outgoing.length === 0 && last.typeId === 2 && !unavailable ? last.quickReplies : [];
    view.quick.hidden = replies.length === 0;
    view.quick.replaceChildren(
      ...replies.map((text) => {
        const chip = h('button', { class: 'chip', type: 'button' }, text);
        chip.addEventListener('click', () => this.actions.reply(text));
        return chip;
      }),
    );
  }

  private keyed(key: string, version: string, draw: () => HTMLLIElement): HTMLLIElement {
    const known = this.rendered.get(key);
    if (known?.version === version) return known.node;
    const node = draw();
    known?.node.replaceWith(node);
    this.rendered.set(key, { node, version });
    return node;
  }
}
