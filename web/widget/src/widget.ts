// The widget's behaviour: registering the device once, the newest page on start and older pages
// on scroll, one socket that resumes from the last message it has, sending with retries that
// never write twice (clientMessageId), typing both ways, seen marks and the unread badge, and
// the unavailable state when Palaver refuses this page for good (unavailable.ts).
import { ClientApi } from './api.ts';
import { Backoff } from './backoff.ts';
import { connect, emitWithAck, type WidgetSocket } from './connection.ts';
import { Conversation, type Outgoing } from './conversation.ts';
import { Emitter, type WidgetEvents } from './emitter.ts';
import { IdentityStore, type Identity } from './identity.ts';
import type { Settings } from './settings.ts';
import { ApiError, TYPE, type ChatMessage, type MediaView } from './types.ts';
import { isUnavailable, ownerMessage } from './unavailable.ts';
import { avatar, mediaPath, renderMessage, renderOutgoing, type FileLink, type MessageActions } from './ui/message-view.ts';
import { View } from './ui/view.ts';
import { h } from './ui/dom.ts';

/** Codes with which Palaver refuses a device that is registered but called without (valid) authorization. */
const NEEDS_AUTHORIZATION = new Set([
  'device_requires_authorization',
  'device_not_registered',
  'authorization_expired',
  'invalid_authorization',
]);
/** The device no longer exists: an operator erased its user (GDPR), or it was never registered here. */
const DEVICE_GONE = 'device_not_found';
/** A refusal of the message itself: trying it again cannot help. */
const FINAL = new Set([
  'validation_failed',
  'media_not_found',
  'invalid_media_type',
  'media_too_large',
  'storage_quota_exceeded',
  // The visitor's upload quota: it frees up within the hour, not within the widget's retries.
  'device_upload_quota_exceeded',
  'conversation_upload_quota_exceeded',
  'missing_media',
]);
/** The visitor stops typing (stopTyping) after this long without a key. */
const TYPING_IDLE_MS = 3000;
/** startTyping is sent again this often while typing goes on, within the server's typing timeout. */
const TYPING_REPEAT_MS = 5000;

function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `w${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

const codeOf = (err: unknown) => (err instanceof ApiError ? err.code : null);

export class Widget {
  readonly events = new Emitter<WidgetEvents>();
  private readonly view: View;
  private readonly api: ClientApi;
  private readonly identities: IdentityStore;
  private identity: Identity;
  private readonly conversation = new Conversation();
  private socket: WidgetSocket | null = null;
  private started: Promise<void> | null = null;
  private isOpen = false;
  private loadingOlder = false;
  private readonly rendered = new Map<string, { node: HTMLLIElement; version: string }>();
  private readonly files = new Map<string, Promise<FileLink>>();
  private typingSentAt = 0;
  private typingIdle: ReturnType<typeof setTimeout> | undefined;
  private agentTypingEnd: ReturnType<typeof setTimeout> | undefined;
  private markingSeen = false;
  /** Marking seen failed for a reason that may pass: tried again when this fires. */
  private seenTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly seenBackoff = new Backoff();
  /** An outgoing message is being tried (one at a time, in order). */
  private sending = false;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly retryBackoff = new Backoff();
  /** The chat was opened and the Service not told yet (chatOpened goes once the socket is up). */
  private chatOpenedPending = false;
  private destroyed = false;
  /** Palaver refused this page for good (unavailable.ts): nothing is tried again. */
  private unavailable = false;
  private readonly actions: MessageActions;
  private readonly onVisibility = () => this.markSeen();
  private readonly onOnline = () => this.flush();
  private readonly onStorage = (event: StorageEvent) => this.identityChangedElsewhere(event);

  constructor(private readonly settings: Settings) {
    this.identities = new IdentityStore(settings.account);
    this.identity = this.identities.load();
    this.api = new ClientApi(settings.server, () => ({
      account: settings.account,
      deviceId: this.identity.deviceId,
      authorization: this.identity.authorization,
    }));
    this.view = new View(settings, {
      open: () => this.open(),
      close: () => this.close(),
      send: (text) => this.send(text, null),
      attach: (file) => this.send(null, file),
      typed: () => this.typed(),
      nearTop: () => void this.loadOlder(),
      transcript: () => this.api.transcript(),
    });
    this.actions = {
      strings: settings.strings,
      file: (media) => this.file(media),
      localFile: (id) => this.conversation.localFiles.get(id),
      canRetry: () => !this.unavailable,
      reply: (text) => this.send(text, null),
      retry: (outgoing) => {
        outgoing.state = 'sending';
        outgoing.error = null;
        this.render();
        this.flush();
      },
      remove: (outgoing) => {
        this.conversation.drop(outgoing);
        this.render();
        this.view.focusComposer();
      },
    };
    document.body.append(this.view.host);
    document.addEventListener('visibilitychange', this.onVisibility);
    window.addEventListener('online', this.onOnline);
    window.addEventListener('storage', this.onStorage);
    // A returning visitor is connected at once (live messages, the unread badge); a new one
    // registers when it first opens the chat, so page views alone create no conversations.
    if (this.identity.registered || settings.startOpen) void this.start();
    if (settings.startOpen) this.open();
  }

  // ---- the public API (window.Palaver) ----

  open(): void {
    if (this.isOpen || this.destroyed) return;
    this.isOpen = true;
    this.view.show(true);
    this.view.scrollToBottom();
    this.events.emit('open', undefined);
    this.chatOpenedPending = true;
    this.sendChatOpened();
    void this.start().then(() => this.markSeen());
  }

  close(): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.stopTyping();
    this.view.show(false);
    this.events.emit('close', undefined);
    this.updateUnread();
  }

  toggle(): void {
    if (this.isOpen) this.close();
    else this.open();
  }

  /** Signs in as a registered user (the Client API's Authorization header): the anonymous conversation merges into theirs. */
  async login(authorization: string): Promise<void> {
    this.identity = { ...this.identity, authorization, registered: false };
    this.identities.save(this.identity);
    await this.restart();
  }

  /** Leaves the registered conversation: a fresh anonymous device, registered when the chat is next used. */
  async logout(): Promise<void> {
    this.identity = this.identities.renew();
    this.conversation.outgoing.splice(0);
    await this.restart();
  }

  destroy(): void {
    this.destroyed = true;
    this.socket?.disconnect();
    this.socket = null;
    clearTimeout(this.typingIdle);
    clearTimeout(this.agentTypingEnd);
    clearTimeout(this.retryTimer);
    clearTimeout(this.seenTimer);
    document.removeEventListener('visibilitychange', this.onVisibility);
    window.removeEventListener('online', this.onOnline);
    window.removeEventListener('storage', this.onStorage);
    for (const file of this.files.values())
      void file.then(
        ({ url }) => URL.revokeObjectURL(url),
        () => undefined,
      );
    this.view.host.remove();
    this.events.clear();
  }

  // ---- connection and history ----

  private start(): Promise<void> {
    if (this.unavailable) return Promise.resolve();
    const deviceId = this.identity.deviceId;
    this.started ??= this.connectFresh().catch((err: unknown) => {
      this.started = null;
      const code = codeOf(err);
      if (isUnavailable(code)) this.becomeUnavailable(code);
      else if (code === DEVICE_GONE) this.deviceGone(deviceId);
      else this.showConnection(false);
      throw err;
    });
    return this.started.catch(() => undefined);
  }

  /** Forgets the conversation and the socket, and starts again with the identity as it is now. */
  private async restart(): Promise<void> {
    this.socket?.disconnect();
    this.socket = null;
    this.started = null;
    this.conversation.reset();
    this.rendered.clear();
    this.view.items.replaceChildren();
    this.render();
    if (this.isOpen || this.identity.authorization) await this.start();
  }

  private async connectFresh(): Promise<void> {
    await this.register();
    await this.loadLatest();
    this.openSocket();
  }

  private async register(): Promise<void> {
    if (this.identity.registered) return;
    if (!this.identity.authorization && this.settings.authorization) {
      const provided = await this.settings.authorization();
      if (provided) this.identity = { ...this.identity, authorization: provided };
    }
    try {
      await this.api.register(location.href);
    } catch (err) {
      if (!NEEDS_AUTHORIZATION.has(codeOf(err) ?? '')) throw err;
      // This device belongs to a registered user whose header is missing or expired, and no
      // fresh one can be had: carry on as a new anonymous visitor rather than not at all.
      this.identity = this.identities.renew();
      await this.api.register(location.href);
    }
    this.identity = { ...this.identity, registered: true };
    this.identities.save(this.identity);
  }

  /** The newest page: what the conversation shows first, and where the socket's feed starts. */
  private async loadLatest(): Promise<void> {
    const page = await this.api.page();
    const c = this.conversation;
    c.add(page.messages, true);
    c.olderThan = page.olderThan;
    c.welcomeMessage = page.welcomeMessage;
    c.stickyMessage = page.stickyMessage;
    c.agent = page.agent;
    // Unseen agent messages older than the page count too.
    for (const id of await this.api.unseen()) c.unread.add(id);
    this.render();
    this.view.scrollToBottom();
    this.markSeen();
  }

  private async loadOlder(): Promise<void> {
    const before = this.conversation.olderThan;
    if (this.loadingOlder || before === null || before === undefined) return;
    this.loadingOlder = true;
    this.render();
    const log = this.view.log;
    const fromBottom = log.scrollHeight - log.scrollTop;
    try {
      const page = await this.api.page(before);
      this.conversation.add(page.messages, false);
      this.conversation.olderThan = page.olderThan;
    } catch {
      // Tried again at the next scroll to the top.
    } finally {
      this.loadingOlder = false;
      this.render();
      // Older messages go above without moving what the visitor is reading.
      log.scrollTop = log.scrollHeight - fromBottom;
    }
  }

  private openSocket(): void {
    if (this.socket || this.destroyed || this.unavailable) return;
    const deviceId = this.identity.deviceId;
    const socket = connect(this.settings.server, () => ({
      identification: `${this.settings.account}:${this.identity.deviceId}`,
      ...(this.identity.authorization ? { authorization: this.identity.authorization } : {}),
      lastMessageId: this.conversation.cursor,
    }));
    this.socket = socket;
    socket.on('connect', () => {
      this.showConnection(true);
      this.sendChatOpened();
      this.flush();
    });
    socket.on('disconnect', () => this.showConnection(false));
    socket.on('connect_error', (err: Error) => {
      // The handshake applies the account's settings too (say, an origin just removed from its list).
      if (isUnavailable(err.message)) return this.becomeUnavailable(err.message);
      if (err.message === DEVICE_GONE) return this.deviceGone(deviceId);
      this.showConnection(false);
      if (NEEDS_AUTHORIZATION.has(err.message)) void this.reauthorize();
    });
    socket.on('message', (message) => this.received(message));
    socket.on('agent', ({ agent }) => {
      this.conversation.agent = agent;
      this.render();
    });
    socket.on('agentTyping', ({ agent, isTyping }) => this.agentTyping(isTyping ? agent : null));
    socket.on('messageStatus', ({ messages }) => {
      this.conversation.setStatus(messages);
      this.render();
      this.updateUnread();
    });
    // A login elsewhere merged this anonymous conversation: read it again as it is now.
    socket.on('merged', () => void this.restart());
    // The conversation was erased (GDPR) with this device: a new device, a fresh conversation.
    socket.on('unauthorized', ({ code }) => (code === DEVICE_GONE ? this.deviceGone(deviceId) : void this.reauthorize()));
  }

  /**
   * Palaver no longer knows this device (an operator erased its user): the conversation shown and
   * the stored identity belong to nobody now. The widget starts over as a new device, anonymous or
   * still the signed-in customer, with an empty conversation, and what was on its way goes there.
   * Only once per device: the other calls that fail with it at the same time change nothing.
   */
  private deviceGone(deviceId: string): void {
    if (deviceId !== this.identity.deviceId || !this.identity.registered) return;
    this.identity = this.identities.renew(this.identity.authorization);
    // An upload belonged to the erased user: the file goes again.
    for (const outgoing of this.conversation.outgoing) outgoing.mediaId = null;
    void this.restart();
  }

  /**
   * Another tab of the site signed in or out (or started over as a new device): this one follows,
   * as that tab did, rather than go on as a device that is no longer the visitor's (its sends
   * refused, or written to a conversation the visitor left).
   */
  private identityChangedElsewhere(event: StorageEvent): void {
    const stored = this.identities.savedElsewhere(event);
    if (!stored || this.destroyed || this.unavailable) return;
    const before = this.identity;
    this.identity = stored;
    // Only registered now (the other tab's POST /devices): nothing changes here.
    if (stored.deviceId === before.deviceId && stored.authorization === before.authorization) return;
    // A logout's unsent messages are the signed-in customer's: they do not go to the anonymous device (logout()).
    if (before.authorization && !stored.authorization) this.conversation.outgoing.splice(0);
    void this.restart();
  }

  /** The registered user's header expired: a fresh one from the site, or a fresh anonymous device. */
  private async reauthorize(): Promise<void> {
    const provided = this.settings.authorization ? await this.settings.authorization() : null;
    if (provided && provided !== this.identity.authorization) return this.login(provided);
    if (this.identity.authorization) return this.logout();
  }

  private received(message: ChatMessage): void {
    const stick = this.view.nearBottom();
    const fresh = this.conversation.add([message], true);
    // An agent message makes its agent the current one (the server's rule): the header follows
    // even when the `agent` push came before this socket was connected.
    if (fresh.length > 0 && message.typeId === TYPE.agent && message.agent) this.conversation.agent = message.agent;
    if (fresh.length > 0 && this.conversation.typing?.id === message.agent?.id) this.agentTyping(null);
    this.render();
    if (stick) this.view.scrollToBottom();
    for (const m of fresh) this.events.emit('message', m);
    this.markSeen();
    this.updateUnread();
  }

  private showConnection(online: boolean): void {
    const banner = this.view.banner;
    banner.hidden = online || this.started === null || this.unavailable;
    banner.textContent = navigator.onLine ? this.settings.strings.reconnecting : this.settings.strings.offline;
  }

  /**
   * Palaver refused this page for good (unavailable.ts): no more calls (no retries, no socket),
   * what was on its way shows as not sent, the visitor reads that the chat is unavailable, and the
   * site owner gets one console line saying what to fix.
   */
  private becomeUnavailable(code: string): void {
    if (this.unavailable) return;
    this.unavailable = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.seenTimer);
    this.socket?.disconnect();
    this.socket = null;
    for (const outgoing of this.conversation.outgoing)
      if (outgoing.state === 'sending') {
        outgoing.state = 'failed';
        outgoing.error = null;
      }
    console.error(ownerMessage(code, this.settings.account));
    this.view.banner.hidden = true;
    this.view.setUnavailable(this.settings.strings.unavailable);
    this.render();
  }

  // ---- sending ----

  private send(text: string | null, file: File | null): void {
    // A reply button still on screen: nothing can go, and nothing should look as if it might.
    if (this.unavailable) return;
    const outgoing: Outgoing = { key: newKey(), text, file, mediaId: null, state: 'sending', error: null };
    this.conversation.outgoing.push(outgoing);
    this.stopTyping();
    this.render();
    this.view.scrollToBottom();
    this.flush();
  }

  /**
   * Sends what is on its way, one message at a time and in the order written, so that the
   * conversation reads as the visitor wrote it. A refused message is marked failed and the next
   * goes on; any other failure (no network, a timeout, a busy server) stops the queue until the
   * next connect, `online`, or a backoff timer, and the message goes again with the same
   * clientMessageId, so Palaver writes it once.
   */
  private flush(): void {
    if (this.sending || this.destroyed || this.unavailable) return;
    const next = this.conversation.outgoing.find((o) => o.state === 'sending');
    if (!next) return;
    this.sending = true;
    clearTimeout(this.retryTimer);
    void this.attempt(next).then((done) => {
      this.sending = false;
      if (done) {
        this.retryBackoff.reset();
        this.flush();
        return;
      }
      this.retryTimer = setTimeout(() => this.flush(), this.retryBackoff.next());
    });
  }

  /** One try of an outgoing message: true when it is settled (stored, or refused for good). */
  private async attempt(outgoing: Outgoing): Promise<boolean> {
    const deviceId = this.identity.deviceId;
    try {
      await this.start();
      // Failed as not sent by becomeUnavailable.
      if (this.unavailable) return true;
      if (outgoing.file && !outgoing.mediaId) outgoing.mediaId = await this.api.upload(outgoing.file);
      const body = outgoing.file
        ? { media: { id: outgoing.mediaId, description: outgoing.file.name }, clientMessageId: outgoing.key }
        : { message: outgoing.text, clientMessageId: outgoing.key };
      const id = await this.deliver(body);
      this.conversation.confirm(outgoing, id);
      return true;
    } catch (err) {
      const code = codeOf(err);
      if (isUnavailable(code)) {
        this.becomeUnavailable(code);
        return true;
      }
      // Tried again as the new device, once its socket is up.
      if (code === DEVICE_GONE) this.deviceGone(deviceId);
      if (!code || !FINAL.has(code)) return false;
      outgoing.state = 'failed';
      outgoing.error = this.refusal(code);
      return true;
    } finally {
      this.render();
    }
  }

  /** Over the socket when it is up, else over REST: both answer the stored message's id. */
  private async deliver(body: Record<string, unknown>): Promise<number> {
    if (this.socket?.connected) {
      const answer = await emitWithAck(this.socket, 'message', body);
      const data = answer.data as { messageId?: string } | null;
      if (answer.status === 'ERROR' || !data?.messageId) {
        const code = answer.notifications[0]?.message ?? 'error';
        throw new ApiError(0, code);
      }
      return Number(data.messageId);
    }
    const response = await fetch(`${this.settings.server}/clientApi/v1.9/messages`, {
      method: 'POST',
      headers: this.api.headers(),
      body: JSON.stringify(body),
      credentials: 'omit',
    });
    const answer = (await response.json()) as { data?: { messageId?: string }; notifications?: Array<{ message: string }> };
    if (!response.ok || !answer.data?.messageId)
      throw new ApiError(response.status, answer.notifications?.[0]?.message ?? `http_${response.status}`);
    return Number(answer.data.messageId);
  }

  private refusal(code: string): string {
    const s = this.settings.strings;
    if (code === 'media_too_large' || code === 'storage_quota_exceeded') return s.fileTooLarge;
    if (code === 'invalid_media_type') return s.fileTypeRefused;
    if (code === 'device_upload_quota_exceeded' || code === 'conversation_upload_quota_exceeded') return s.uploadLimit;
    if (code === 'media_not_found' || code === 'missing_media') return s.uploadFailed;
    return s.notSent;
  }

  // ---- typing, seen, unread ----

  private typed(): void {
    if (!this.socket?.connected) return;
    const now = Date.now();
    if (now - this.typingSentAt > TYPING_REPEAT_MS) {
      this.typingSentAt = now;
      void this.emitEvent('startTyping');
    }
    clearTimeout(this.typingIdle);
    this.typingIdle = setTimeout(() => this.stopTyping(), TYPING_IDLE_MS);
  }

  private stopTyping(): void {
    clearTimeout(this.typingIdle);
    if (this.typingSentAt === 0) return;
    this.typingSentAt = 0;
    void this.emitEvent('stopTyping');
  }

  private sendChatOpened(): void {
    if (!this.chatOpenedPending || !this.isOpen || !this.socket?.connected) return;
    this.chatOpenedPending = false;
    void this.emitEvent('chatOpened');
  }

  private async emitEvent(name: 'startTyping' | 'stopTyping' | 'chatOpened'): Promise<void> {
    if (!this.socket?.connected) return;
    try {
      await emitWithAck(this.socket, name, {});
    } catch {
      // Typing and opening are hints: one lost is not worth a retry.
    }
  }

  private agentTyping(agent: ChatMessage['agent']): void {
    clearTimeout(this.agentTypingEnd);
    this.conversation.typing = agent;
    // The server ends typing itself; this only guards against a stop that never comes.
    if (agent) this.agentTypingEnd = setTimeout(() => this.agentTyping(null), 30_000);
    this.render();
  }

  private visible(): boolean {
    return this.isOpen && document.visibilityState === 'visible';
  }

  /**
   * Agent messages are seen when the open chat is on screen. A refusal for good ends in the
   * unavailable state; any other failure is tried again after a growing delay (a new message or
   * the tab coming back does not hurry it), so a lasting error never becomes a flood of calls.
   */
  private markSeen(): void {
    const ids = [...this.conversation.unread];
    if (!this.visible() || ids.length === 0 || this.markingSeen || this.seenTimer || !this.identity.registered || this.unavailable) return;
    this.markingSeen = true;
    const deviceId = this.identity.deviceId;
    this.api.markSeen(ids).then(
      () => {
        this.markingSeen = false;
        this.seenBackoff.reset();
        this.conversation.setStatus(ids.map((id) => ({ id, status: 4 })));
        this.updateUnread();
        this.render();
        // Anything that arrived meanwhile.
        this.markSeen();
      },
      (err: unknown) => {
        this.markingSeen = false;
        const code = codeOf(err);
        if (isUnavailable(code)) return this.becomeUnavailable(code);
        // The new device has nothing unread.
        if (code === DEVICE_GONE) return this.deviceGone(deviceId);
        this.seenTimer = setTimeout(() => {
          this.seenTimer = undefined;
          this.markSeen();
        }, this.seenBackoff.next());
      },
    );
  }

  private updateUnread(): void {
    const count = this.visible() ? 0 : this.conversation.unread.size;
    this.view.setUnread(count);
    this.events.emit('unread', count);
  }

  /** A conversation file, downloaded once: its object URL, and its size from the bytes Palaver sent. */
  private file(media: MediaView): Promise<FileLink> {
    const path = mediaPath(media);
    let file = this.files.get(path);
    if (!file) {
      file = this.api.media(path).then((blob) => ({ url: URL.createObjectURL(blob), size: blob.size }));
      file.catch(() => this.files.delete(path));
      this.files.set(path, file);
    }
    return file;
  }

  // ---- drawing ----

  /**
   * Brings the list in line with the conversation: each entry drawn once, again only when it
   * changed. A control that had focus and is drawn no more (a quick reply once used, a Retry once
   * clicked) leaves focus in the composer, not on the host page under the dialog.
   */
  private render(): void {
    const hadFocus = this.view.holdsFocus();
    this.draw();
    if (hadFocus && !this.view.holdsFocus()) this.view.focusComposer();
  }

  private draw(): void {
    const c = this.conversation;
    const s = this.settings.strings;
    const view = this.view;
    const entries = c.entries();
    const lastVisitor = [...c.messages.values()].filter((m) => m.typeId === 1).reduce((a, m) => Math.max(a, m.id), 0);
    const wanted: HTMLElement[] = [];
    if (c.olderThan === null && c.welcomeMessage)
      wanted.push(this.keyed('welcome', c.welcomeMessage, () => h('li', { class: 'welcome' }, c.welcomeMessage ?? '')));
    // Without a welcome message an empty conversation would be a blank panel: a prompt instead.
    else if (c.olderThan === null && entries.length === 0 && !this.unavailable)
      wanted.push(this.keyed('prompt', s.emptyPrompt, () => h('li', { class: 'welcome' }, s.emptyPrompt)));
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
        wanted.push(this.keyed(`o${o.key}`, `${o.state}:${o.error}:${this.unavailable}`, () => renderOutgoing(o, this.actions)));
      }
    }
    const items = view.items;
    wanted.forEach((node, i) => {
      if (items.children[i] !== node) items.insertBefore(node, items.children[i] ?? null);
    });
    while (items.children.length > wanted.length) items.lastElementChild?.remove();

    view.older.hidden = !this.loadingOlder && c.olderThan !== null;
    view.older.textContent = this.loadingOlder ? s.loadingOlder : c.olderThan === null && c.messages.size > 0 ? s.startOfConversation : '';

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
    const replies = last && c.outgoing.length === 0 && last.typeId === 2 && !this.unavailable ? last.quickReplies : [];
    view.quick.hidden = replies.length === 0;
    view.quick.replaceChildren(
      ...replies.map((text) => {
        const chip = h('button', { class: 'chip', type: 'button' }, text);
        chip.addEventListener('click', () => this.send(text, null));
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

function sameAgent(a: ChatMessage['agent'], b: ChatMessage['agent']): boolean {
  return a?.id === b?.id && a?.name === b?.name && (a?.avatar ?? null) === (b?.avatar ?? null);
}
