// The widget's behaviour, put together: registering the device once, the newest page on start and
// older pages on scroll, one socket that resumes from the last message it has, and the
// unavailable state when Palaver refuses this page for good (unavailable.ts). What it puts
// together: the socket or REST (transport.ts), the messages on their way (outgoing-queue.ts),
// typing both ways (typing.ts), seen marks (seen-marks.ts), the conversation's files (files.ts)
// and drawing (conversation-renderer.ts).
import { ClientApi } from './api.ts';
import { Conversation } from './conversation.ts';
import { ConversationRenderer } from './conversation-renderer.ts';
import { Emitter, type WidgetEvents } from './emitter.ts';
import { ConversationFiles } from './files.ts';
import { IdentityStore, type Identity } from './identity.ts';
import { OutgoingQueue } from './outgoing-queue.ts';
import { codeOf, DEVICE_GONE, NEEDS_AUTHORIZATION } from './refusals.ts';
import { SeenMarks } from './seen-marks.ts';
import type { Settings } from './settings.ts';
import { Transport } from './transport.ts';
import { TYPE, type ChatMessage } from './types.ts';
import { Typing } from './typing.ts';
import { isUnavailable, ownerMessage } from './unavailable.ts';
import { View } from './ui/view.ts';
import { Reach } from './reach.ts';

export class Widget {
  readonly events = new Emitter<WidgetEvents>();
  private readonly view: View;
  private readonly api: ClientApi;
  private readonly identities: IdentityStore;
  private identity: Identity;
  private readonly conversation = new Conversation();
  private readonly transport: Transport;
  private readonly queue: OutgoingQueue;
  private readonly typing: Typing;
  private readonly seen: SeenMarks;
  private readonly files: ConversationFiles;
  private readonly renderer: ConversationRenderer;
  private started: Promise<void> | null = null;
  private isOpen = false;
  private loadingOlder = false;
  /** The chat was opened and the Service not told yet (chatOpened goes once the socket is up). */
  private chatOpenedPending = false;
  private destroyed = false;
  /** Palaver refused this page for good (unavailable.ts): nothing is tried again. */
  private unavailable = false;
  /** The pre-chat form, business hours and email links (reach.ts). */
  private readonly reach: Reach;
  private readonly onVisibility = () => this.seen.mark();
  private readonly onOnline = () => this.queue.flush();
  private readonly onStorage = (event: StorageEvent) => this.identityChangedElsewhere(event);

  constructor(private readonly settings: Settings) {
    this.identities = new IdentityStore(settings.account);
    this.identity = this.identities.load();
    this.api = new ClientApi(settings.server, () => ({
      account: settings.account,
      deviceId: this.identity.deviceId,
      authorization: this.identity.authorization,
    }));
    this.transport = new Transport(settings.server, this.api);
    const render = () => this.render();
    this.typing = new Typing(this.transport, this.conversation, render);
    this.queue = new OutgoingQueue(this.conversation, this.transport, this.api, settings.strings, {
      start: () => this.start(),
      stopped: () => this.destroyed || this.unavailable,
      unavailable: () => this.unavailable,
      deviceId: () => this.identity.deviceId,
      becomeUnavailable: (code) => this.becomeUnavailable(code),
      deviceGone: (deviceId) => this.deviceGone(deviceId),
      render,
    });
    this.seen = new SeenMarks(this.api, this.conversation, {
      canMark: () => this.visible() && this.identity.registered && !this.unavailable,
      deviceId: () => this.identity.deviceId,
      marked: () => {
        this.updateUnread();
        this.render();
      },
      becomeUnavailable: (code) => this.becomeUnavailable(code),
      deviceGone: (deviceId) => this.deviceGone(deviceId),
    });
    this.files = new ConversationFiles(this.api);
    this.view = new View(settings, {
      open: () => this.open(),
      close: () => this.close(),
      send: (text) => this.send(text, null),
      attach: (file) => this.send(null, file),
      typed: () => this.typing.typed(),
      nearTop: () => void this.loadOlder(),
      transcript: () => this.api.transcript(),
    });
    this.renderer = new ConversationRenderer(
      this.view,
      this.conversation,
      settings,
      {
        strings: settings.strings,
        file: (media) => this.files.file(media),
        localFile: (id) => this.conversation.localFiles.get(id),
        canRetry: () => !this.unavailable,
        reply: (text) => this.send(text, null),
        retry: (outgoing) => {
          outgoing.state = 'sending';
          outgoing.error = null;
          this.render();
          this.queue.flush();
        },
        remove: (outgoing) => {
          this.conversation.drop(outgoing);
          this.render();
          this.view.focusComposer();
        },
      },
      {
        loadingOlder: () => this.loadingOlder,
        unavailable: () => this.unavailable,
        closed: () => this.reach.closed(),
        drawBeside: () => this.reach.render(),
      },
    );
    this.reach = new Reach(settings, this.view, {
      headers: () => this.api.headers(),
      registered: () => this.identity.registered,
      signedIn: () => this.identity.authorization !== null,
      visitorWrote: () =>
        this.conversation.outgoing.length > 0 || [...this.conversation.messages.values()].some((m) => m.typeId === TYPE.user),
      start: () => this.start(),
      adopt: (deviceId) => this.adoptDevice(deviceId),
      open: () => this.open(),
      redraw: () => this.render(),
    });
    document.body.append(this.view.host);
    document.addEventListener('visibilitychange', this.onVisibility);
    window.addEventListener('online', this.onOnline);
    window.addEventListener('storage', this.onStorage);
    // A returning visitor is connected at once (live messages, the unread badge); a new one
    // registers when it first opens the chat, so page views alone create no conversations.
    if (this.identity.registered || settings.startOpen) void this.start();
    if (settings.startOpen) this.open();
    void this.reach.redeemFromLocation();
  }

  // ---- the public API (window.Palaver) ----

  open(): void {
    if (this.isOpen || this.destroyed) return;
    this.isOpen = true;
    this.view.show(true);
    this.view.scrollToBottom();
    this.events.emit('open', undefined);
    this.reach.opened();
    this.chatOpenedPending = true;
    this.sendChatOpened();
    void this.start().then(() => this.seen.mark());
  }

  close(): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.typing.stop();
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
    this.reach.destroy();
    this.transport.close();
    this.typing.clear();
    this.queue.stop();
    this.seen.stop();
    document.removeEventListener('visibilitychange', this.onVisibility);
    window.removeEventListener('online', this.onOnline);
    window.removeEventListener('storage', this.onStorage);
    this.files.release();
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
    this.transport.close();
    this.started = null;
    this.conversation.reset();
    this.renderer.reset();
    this.render();
    if (this.isOpen || this.identity.authorization) await this.start();
  }

  private async connectFresh(): Promise<void> {
    await this.register();
    await this.loadLatest();
    this.openSocket();
    void this.reach.load();
  }

  /** An email's link gave this browser a device of the conversation's (anonymous) user: the widget goes on as it. */
  private async adoptDevice(deviceId: string): Promise<void> {
    this.identity = { deviceId, authorization: null, registered: true };
    this.identities.save(this.identity);
    this.conversation.outgoing.splice(0);
    await this.restart();
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
    this.seen.mark();
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
    if (this.destroyed || this.unavailable) return;
    const deviceId = this.identity.deviceId;
    this.transport.open(
      () => ({
        identification: `${this.settings.account}:${this.identity.deviceId}`,
        ...(this.identity.authorization ? { authorization: this.identity.authorization } : {}),
        lastMessageId: this.conversation.cursor,
      }),
      {
        connect: () => {
          this.showConnection(true);
          this.sendChatOpened();
          this.queue.flush();
        },
        disconnect: () => this.showConnection(false),
        refused: (code) => {
          // The handshake applies the account's settings too (say, an origin just removed from its list).
          if (isUnavailable(code)) return this.becomeUnavailable(code);
          if (code === DEVICE_GONE) return this.deviceGone(deviceId);
          this.showConnection(false);
          if (NEEDS_AUTHORIZATION.has(code)) void this.reauthorize();
        },
        message: (message) => this.received(message),
        agent: ({ agent }) => {
          this.conversation.agent = agent;
          this.render();
        },
        agentTyping: ({ agent, isTyping }) => this.typing.agent(isTyping ? agent : null),
        messageStatus: ({ messages }) => {
          this.conversation.setStatus(messages);
          this.render();
          this.updateUnread();
        },
        // A login elsewhere merged this anonymous conversation: read it again as it is now.
        merged: () => void this.restart(),
        // The conversation was erased (GDPR) with this device: a new device, a fresh conversation.
        unauthorized: ({ code }) => (code === DEVICE_GONE ? this.deviceGone(deviceId) : void this.reauthorize()),
      },
    );
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
    if (fresh.length > 0 && this.conversation.typing?.id === message.agent?.id) this.typing.agent(null);
    this.render();
    if (stick) this.view.scrollToBottom();
    for (const m of fresh) this.events.emit('message', m);
    this.seen.mark();
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
    this.queue.giveUp();
    this.seen.stop();
    this.transport.close();
    console.error(ownerMessage(code, this.settings.account));
    this.view.banner.hidden = true;
    this.view.setUnavailable(this.settings.strings.unavailable);
    this.render();
  }

  // ---- sending ----

  private send(text: string | null, file: File | null): void {
    // A reply button still on screen: nothing can go, and nothing should look as if it might.
    if (this.unavailable) return;
    this.queue.add(text, file);
    this.typing.stop();
    this.render();
    this.view.scrollToBottom();
    this.queue.flush();
  }

  private sendChatOpened(): void {
    if (!this.chatOpenedPending || !this.isOpen || !this.transport.connected) return;
    this.chatOpenedPending = false;
    void this.transport.hint('chatOpened');
  }

  // ---- seen, unread, drawing ----

  private visible(): boolean {
    return this.isOpen && document.visibilityState === 'visible';
  }

  private updateUnread(): void {
    const count = this.visible() ? 0 : this.conversation.unread.size;
    this.view.setUnread(count);
    this.events.emit('unread', count);
  }

  private render(): void {
    this.renderer.render();
  }
}
