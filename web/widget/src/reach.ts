// Reaching a visitor who leaves (docs/widget.md): the account's pre-chat form, the after-hours
// notice with when the team is back, the usual reply time in the header, and the way back from
// an email's link (`#palaver-conversation=`). The widget calls in at a few points (start, draw,
// open, destroy); everything else lives here and in ui/prechat-form.ts, ui/hours-notice.ts.
import { ReachApi, type ChatSettings, type Contact } from './reach-api.ts';
import { reachStrings, type ReachStrings } from './reach-strings.ts';
import { backAt, replyTime, untilChange } from './schedule.ts';
import type { Settings } from './settings.ts';
import { ApiError } from './types.ts';
import { h } from './ui/dom.ts';
import { hoursNotice, infoLine } from './ui/hours-notice.ts';
import { firstField, prechatForm } from './ui/prechat-form.ts';

export interface ReachSlots {
  /** Above the conversation: the after-hours notice, the email link's outcome. */
  reachTop: HTMLElement;
  /** Between the conversation and the composer: the form. */
  reachBottom: HTMLElement;
  /** Under the header's heading: the usual reply time. */
  headerNote: HTMLElement;
  /** Hidden while the form must be filled before the first message. */
  composer: HTMLElement;
  holdsFocus(): boolean;
  focusComposer(): void;
}

export interface ReachHooks {
  headers(): Record<string, string>;
  registered(): boolean;
  signedIn(): boolean;
  /** The visitor has written (a message stored or on its way). */
  visitorWrote(): boolean;
  /** Registers the device if need be (the form saves to the visitor's user). */
  start(): Promise<void>;
  /** The email link gave this browser a device of the conversation's user: use it from now. */
  adopt(deviceId: string): Promise<void>;
  open(): void;
  /** Draws the conversation and the slots again (the empty prompt follows the hours). */
  redraw(): void;
}

const LINK = /(?:^#|&)palaver-conversation=([A-Za-z0-9_.-]+)/;

function freshDeviceId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export class Reach {
  private readonly api: ReachApi;
  private readonly s: ReachStrings;
  private chat: ChatSettings | null = null;
  private contact: Contact | null = null;
  private skipped = false;
  /** The form was just saved: a thank-you line stands where it was. */
  private savedEmail: string | null = null;
  private linkNote: string | null = null;
  /** What the slots show now; they are redrawn only when it changes (typed input survives). */
  private shown = '';
  private refresh: ReturnType<typeof setTimeout> | undefined;
  private destroyed = false;

  constructor(
    private readonly settings: Settings,
    private readonly slots: ReachSlots,
    private readonly hooks: ReachHooks,
  ) {
    this.api = new ReachApi(settings.server, () => hooks.headers());
    this.s = reachStrings(settings.locale);
  }

  /** The account's settings, and the visitor's contact once the device is registered. Failures leave the widget as it was. */
  async load(): Promise<void> {
    try {
      const [chat, contact] = await Promise.all([
        this.api.settings(),
        this.hooks.registered() ? this.api.contact().catch(() => null) : Promise.resolve(null),
      ]);
      this.chat = chat;
      this.contact = contact;
    } catch {
      return;
    }
    clearTimeout(this.refresh);
    const wait = this.chat.hours ? untilChange(this.chat.hours) : null;
    if (wait !== null && !this.destroyed) this.refresh = setTimeout(() => void this.load(), wait);
    this.hooks.redraw();
  }

  /** The team is away now (outside the account's business hours). */
  closed(): boolean {
    return this.chat?.hours ? !this.chat.hours.open : false;
  }

  destroy(): void {
    this.destroyed = true;
    clearTimeout(this.refresh);
  }

  /** The chat opened: the form's first field takes focus when the form stands in for the composer. */
  opened(): void {
    const form = this.slots.reachBottom.querySelector('form');
    if (form && this.slots.composer.hidden) firstField(form)?.focus();
  }

  /**
   * `#palaver-conversation=<token>` in the page's address (a link of an answer by email): asks
   * Palaver what it opens, takes the token out of the address (it is not for bookmarks or
   * for sharing), and opens the chat.
   */
  async redeemFromLocation(): Promise<void> {
    const match = LINK.exec(location.hash);
    if (!match?.[1]) return;
    const token = match[1];
    const rest = location.hash.replace(LINK, '').replace(/^#?&?/, '');
    history.replaceState(history.state, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
    try {
      const answer = await this.api.redeem(token, this.hooks.signedIn() ? undefined : freshDeviceId());
      if (answer.outcome === 'device') await this.hooks.adopt(answer.deviceId);
      if (answer.outcome === 'sign_in') this.linkNote = this.s.signInForLink;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) this.linkNote = this.s.linkExpired;
    }
    this.shown = '';
    this.render();
    this.hooks.open();
  }

  private emailKnown(): string | null {
    return this.savedEmail ?? this.contact?.email ?? null;
  }

  /** Brings the slots in line with the settings, the contact and the conversation. */
  render(): void {
    const chat = this.chat;
    const closed = this.closed();
    const form = chat?.prechatForm ?? { fields: 'none', timing: 'after' };
    const email = this.emailKnown();
    const wrote = this.hooks.visitorWrote();
    const before = form.fields !== 'none' && form.timing === 'before' && !email && !wrote;
    // After the first message, or while the team is away (where the answer will go matters then).
    const after = !before && !email && !this.skipped && ((form.fields !== 'none' && wrote) || closed);
    const mode = before ? 'before' : after ? 'after' : this.savedEmail ? 'thanks' : 'none';
    const back = chat?.hours?.nextOpenAt ? backAt(chat.hours.nextOpenAt, this.settings.locale, this.s) : this.s.notBackSoon;
    const key = JSON.stringify([mode, closed, back, email, this.linkNote, chat?.replyTimeMinutes, form.fields]);
    if (key === this.shown) return;
    this.shown = key;
    const hadFocus = this.slots.holdsFocus();

    this.slots.headerNote.textContent = closed ? this.s.away : chat?.replyTimeMinutes ? replyTime(chat.replyTimeMinutes, this.s) : '';
    this.slots.headerNote.hidden = this.slots.headerNote.textContent === '';

    this.slots.reachTop.replaceChildren(
      ...(this.linkNote ? [infoLine(this.linkNote)] : []),
      ...(closed ? [hoursNotice({ back, where: email ? this.s.answerByEmail(email) : this.s.leaveEmail })] : []),
    );

    if (mode === 'before' || mode === 'after') {
      const element = prechatForm({
        strings: this.s,
        askName: form.fields === 'name_email',
        required: mode === 'before',
        submit: (values) => this.save(values),
        skip: () => {
          this.skipped = true;
          this.render();
          this.slots.focusComposer();
        },
      });
      this.slots.reachBottom.replaceChildren(element);
      if (mode === 'before' && hadFocus) firstField(element)?.focus();
    } else {
      this.slots.reachBottom.replaceChildren(
        ...(mode === 'thanks' && email ? [h('p', { class: 'prechat-thanks', role: 'status' }, this.s.thanks(email))] : []),
      );
    }
    this.slots.composer.hidden = mode === 'before';
    if (hadFocus && !this.slots.holdsFocus()) this.slots.focusComposer();
  }

  private async save(values: { name: string | null; email: string }): Promise<'saved' | 'invalid_email' | 'failed'> {
    try {
      await this.hooks.start();
      if (!this.hooks.registered()) return 'failed';
      const language = this.settings.locale.startsWith('nl') ? 'nl' : 'en';
      this.contact = await this.api.setContact({ email: values.email, name: values.name, language });
    } catch (err) {
      if (err instanceof ApiError && err.code === 'validation_failed' && err.codes.includes('body.email')) return 'invalid_email';
      // The customer's backend set their contact: it is known, the form has nothing to ask.
      if (err instanceof ApiError && err.code === 'contact_set_by_service') {
        this.contact = await this.api.contact().catch(() => this.contact);
        this.render();
        return 'saved';
      }
      return 'failed';
    }
    this.savedEmail = values.email;
    const wasBefore = this.slots.composer.hidden;
    this.render();
    if (wasBefore) this.slots.focusComposer();
    return 'saved';
  }
}
