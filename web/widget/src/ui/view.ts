// The widget's elements in its Shadow DOM: the launcher with its unread badge, and the chat
// dialog (WAI-ARIA dialog and log patterns): a header naming the dialog, the offline banner, the
// sticky message, the chat-unavailable message, the conversation log, the typing line, quick replies and the composer.
import type { Settings } from '../settings.ts';
import { h, icon, ICONS } from './dom.ts';
import { trapFocus } from './focus-trap.ts';
import { transcriptControl, transcriptStrings } from './transcript-button.ts';
import { CSS } from './styles.ts';
import { REACH_CSS } from './reach-styles.ts';

export interface ViewHandlers {
  open(): void;
  close(): void;
  send(text: string): void;
  attach(file: File): void;
  typed(): void;
  nearTop(): void;
  /** Email the conversation to the customer: the address it goes to (transcript-button.ts). */
  transcript(): Promise<string>;
}

function adoptStyles(root: ShadowRoot): void {
  // A constructed sheet needs no 'unsafe-inline' under a Content-Security-Policy; older browsers get a <style>.
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS + REACH_CSS);
    root.adoptedStyleSheets = [sheet];
  } else {
    root.append(h('style', {}, CSS + REACH_CSS));
  }
}

export class View {
  readonly host: HTMLElement;
  readonly shadow: ShadowRoot;
  readonly root: HTMLElement;
  readonly launcher: HTMLButtonElement;
  readonly badge: HTMLElement;
  readonly unreadText: HTMLElement;
  readonly dialog: HTMLElement;
  readonly subtitle: HTMLElement;
  readonly headerAvatar: HTMLElement;
  readonly banner: HTMLElement;
  readonly sticky: HTMLElement;
  readonly unavailable: HTMLElement;
  readonly log: HTMLElement;
  /** The visitor reads the newest message (the log was scrolled to its end, and not away since). */
  private atNewest = true;
  readonly older: HTMLElement;
  readonly items: HTMLOListElement;
  readonly typing: HTMLElement;
  readonly quick: HTMLElement;
  readonly notice: HTMLElement;
  readonly textarea: HTMLTextAreaElement;
  readonly sendButton: HTMLButtonElement;
  readonly fileInput: HTMLInputElement;
  /** The pre-chat form and business hours (reach.ts): above the log, below it, under the heading. */
  readonly reachTop: HTMLElement;
  readonly reachBottom: HTMLElement;
  readonly headerNote: HTMLElement;
  readonly composer: HTMLFormElement;
  private readonly attach: HTMLButtonElement;
  private readonly closeButton: HTMLButtonElement;

  constructor(
    private readonly settings: Settings,
    private readonly handlers: ViewHandlers,
  ) {
    const s = settings.strings;
    this.host = h('div', { 'data-palaver-widget': '' });
    this.shadow = this.host.attachShadow({ mode: 'open' });
    adoptStyles(this.shadow);

    this.badge = h('span', { class: 'badge', 'aria-hidden': 'true', hidden: true });
    this.unreadText = h('span', { class: 'sr-only', id: 'palaver-unread' });
    this.launcher = h(
      'button',
      {
        class: 'launcher',
        type: 'button',
        'aria-label': s.openChat,
        'aria-describedby': 'palaver-unread',
        'aria-expanded': 'false',
        'aria-controls': 'palaver-dialog',
      },
      icon(ICONS.chat),
      this.badge,
    );

    this.headerAvatar = h('span', { hidden: true });
    this.subtitle = h('p', {});
    this.headerNote = h('p', { class: 'reply-time', hidden: true });
    const close = h('button', { class: 'close', type: 'button', 'aria-label': s.closeChat }, icon(ICONS.close));
    this.closeButton = close;
    const transcript = transcriptControl(transcriptStrings(settings.locale), () => handlers.transcript());
    const header = h(
      'div',
      { class: 'header' },
      this.headerAvatar,
      h('div', { class: 'heading' }, h('h2', { id: 'palaver-title' }, settings.title), this.subtitle, this.headerNote),
      transcript.button,
      close,
    );

    this.banner = h('div', { class: 'banner', role: 'status', hidden: true });
    this.sticky = h('div', { class: 'sticky', hidden: true });
    this.unavailable = h('div', { class: 'unavailable', role: 'alert', hidden: true });
    this.older = h('div', { class: 'older', hidden: true });
    this.items = h('ol', { class: 'items' });
    this.log = h('div', { class: 'log', role: 'log', 'aria-label': s.messages, tabindex: '0' }, this.older, this.items);
    // An image takes its height when it has loaded, after the log was scrolled to the newest
    // message: a visitor who was reading the newest stays there (a card's picture, a preview).
    this.log.addEventListener('scroll', () => (this.atNewest = this.nearBottom()));
    this.log.addEventListener(
      'load',
      () => {
        if (this.atNewest) this.scrollToBottom();
      },
      true,
    );
    this.typing = h('div', { class: 'typing', role: 'status' });
    this.quick = h('div', { class: 'quick', hidden: true });
    this.notice = h('div', { class: 'notice', role: 'alert', hidden: true });

    this.textarea = h('textarea', {
      'aria-label': s.message,
      placeholder: s.placeholder,
      rows: '1',
      maxlength: '5000',
      enterkeyhint: 'send',
    });
    this.fileInput = h('input', {
      type: 'file',
      hidden: true,
      tabindex: '-1',
      accept: 'image/png,image/jpeg,image/gif,application/pdf,.doc,.docx,.xls,.xlsx,.ppt,.pptx,.txt,.csv,audio/*,video/mp4',
    });
    const attach = h('button', { class: 'icon-button', type: 'button', 'aria-label': s.attachFile }, icon(ICONS.attach));
    this.attach = attach;
    this.sendButton = h('button', { class: 'icon-button send', type: 'submit', 'aria-label': s.send, disabled: true }, icon(ICONS.send));
    const composer = h('form', { class: 'composer' }, attach, this.fileInput, this.textarea, this.sendButton);
    this.composer = composer;
    this.reachTop = h('div', { class: 'reach-top' });
    this.reachBottom = h('div', { class: 'reach-bottom' });

    this.dialog = h(
      'div',
      { class: 'dialog', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'palaver-title', id: 'palaver-dialog', hidden: true },
      header,
      transcript.status,
      this.banner,
      this.sticky,
      this.unavailable,
      this.reachTop,
      this.log,
      this.typing,
      this.quick,
      this.reachBottom,
      this.notice,
      composer,
    );
    this.root = h('div', { class: settings.position === 'left' ? 'root left' : 'root' }, this.dialog, this.launcher, this.unreadText);
    // Set through the CSSOM, which a Content-Security-Policy does not count as an inline style.
    this.root.style.setProperty('--primary', settings.primaryColor);
    this.shadow.append(this.root);

    this.launcher.addEventListener('click', () => handlers.open());
    close.addEventListener('click', () => handlers.close());
    attach.addEventListener('click', () => this.fileInput.click());
    this.fileInput.addEventListener('change', () => {
      const file = this.fileInput.files?.[0];
      this.fileInput.value = '';
      if (file) handlers.attach(file);
    });
    composer.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submit();
    });
    this.textarea.addEventListener('keydown', (event) => {
      // Enter sends; Shift+Enter is a new line; an IME composing text keeps its Enter.
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit();
      }
    });
    this.textarea.addEventListener('input', () => {
      this.sendButton.disabled = this.textarea.value.trim() === '';
      this.autosize();
      handlers.typed();
    });
    this.dialog.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        handlers.close();
        return;
      }
      trapFocus(this.dialog, this.shadow, event);
    });
    this.log.addEventListener('scroll', () => {
      if (this.log.scrollTop < 40) handlers.nearTop();
    });
  }

  private submit(): void {
    const text = this.textarea.value.trim();
    if (!text) return;
    this.textarea.value = '';
    // Send clicked: the button is about to be disabled, and a disabled button's focus falls to
    // the host page, out of the dialog, where Escape no longer closes it (some browsers never
    // focus a clicked button at all). The next message is written in the text box: focus goes
    // there first.
    this.textarea.focus();
    this.sendButton.disabled = true;
    this.autosize();
    this.handlers.send(text);
  }

  private autosize(): void {
    this.textarea.style.height = 'auto';
    this.textarea.style.height = `${Math.min(this.textarea.scrollHeight + 2, 120)}px`;
  }

  show(open: boolean): void {
    this.dialog.hidden = !open;
    this.root.classList.toggle('open', open);
    this.launcher.setAttribute('aria-expanded', String(open));
    // A disabled text box (the chat is unavailable) cannot take focus: the dialog's first control does.
    if (open) (this.textarea.disabled || this.composer.hidden ? this.closeButton : this.textarea).focus();
    else this.launcher.focus();
  }

  /** Where focus goes when the control that had it leaves the list (a removed message's button). */
  focusComposer(): void {
    // A disabled text box (the chat is unavailable) takes no focus: the dialog's first control does.
    (this.textarea.disabled || this.composer.hidden ? this.closeButton : this.textarea).focus();
  }

  /** Focus is on one of the open dialog's controls. */
  holdsFocus(): boolean {
    const active = this.shadow.activeElement;
    return !this.dialog.hidden && active !== null && this.dialog.contains(active);
  }

  setUnread(count: number): void {
    this.badge.hidden = count === 0;
    this.badge.textContent = count > 99 ? '99+' : String(count);
    this.unreadText.textContent = count === 0 ? '' : this.settings.strings.unread(count);
  }

  nearBottom(): boolean {
    return this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 80;
  }

  scrollToBottom(): void {
    this.log.scrollTop = this.log.scrollHeight;
    this.atNewest = true;
  }

  /** The chat cannot be used on this page: the message shows and the composer is disabled. */
  setUnavailable(text: string): void {
    const hadFocus = this.shadow.activeElement === this.textarea;
    this.unavailable.textContent = text;
    this.unavailable.hidden = false;
    for (const control of [this.textarea, this.attach, this.sendButton]) control.disabled = true;
    // "Write a message…" in a box that takes none would invite what cannot be done.
    this.textarea.placeholder = '';
    // Focus must not drop out of the open dialog with the text box it was in.
    if (hadFocus) this.closeButton.focus();
  }

  showNotice(text: string | null): void {
    this.notice.hidden = text === null;
    this.notice.textContent = text ?? '';
  }
}
