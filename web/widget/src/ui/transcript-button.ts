// "Email me this conversation": a button in the dialog's header, and the line that says what
// came of it (docs/widget.md). The widget asks POST /users/me/transcript; Palaver emails the
// whole conversation to the address on the customer (set with PUT /users/me/contact). The
// answer is said in a status line (read out by screen readers): sent to which address, or why
// not (no address known, unsubscribed, asked too often).
import { ApiError } from '../types.ts';
import { h, icon } from './dom.ts';

export interface TranscriptStrings {
  button: string;
  sending: string;
  sent: (email: string) => string;
  noEmail: string;
  unsubscribed: string;
  empty: string;
  tooMany: string;
  failed: string;
}

export const TRANSCRIPT_STRINGS: Readonly<Record<'en' | 'nl', TranscriptStrings>> = {
  en: {
    button: 'Email me this conversation',
    sending: 'Sending the conversation…',
    sent: (email) => `The conversation is on its way to ${email}.`,
    noEmail: 'We do not know your email address yet.',
    unsubscribed: 'You unsubscribed from our emails, so we cannot send it.',
    empty: 'There is nothing to send yet.',
    tooMany: 'You asked for it a few times already. Try again later.',
    failed: 'The conversation could not be sent. Try again later.',
  },
  nl: {
    button: 'Stuur mij dit gesprek per e-mail',
    sending: 'Het gesprek wordt verstuurd…',
    sent: (email) => `Het gesprek is onderweg naar ${email}.`,
    noEmail: 'We kennen je e-mailadres nog niet.',
    unsubscribed: 'Je hebt je afgemeld voor onze e-mails, dus we kunnen het niet sturen.',
    empty: 'Er is nog niets om te sturen.',
    tooMany: 'Je hebt het al een paar keer gevraagd. Probeer het later nog eens.',
    failed: 'Het gesprek kon niet worden verstuurd. Probeer het later nog eens.',
  },
};

/** An envelope with a flap, on the icons' 24-unit grid. */
const MAIL_ICON = 'M4 5h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V7a2 2 0 0 1 2-2zm0 2v.5l8 5 8-5V7H4zm16 2.8-8 5-8-5V17h16V9.8z';

export function transcriptStrings(locale: string): TranscriptStrings {
  return locale.toLowerCase().startsWith('nl') ? TRANSCRIPT_STRINGS.nl : TRANSCRIPT_STRINGS.en;
}

export interface TranscriptControl {
  /** Goes in the header, beside the close button (it takes the header's colours). */
  button: HTMLButtonElement;
  /** Goes under the header; hidden until the button was used. */
  status: HTMLElement;
}

/** `request` asks Palaver and answers the address the conversation goes to. */
export function transcriptControl(strings: TranscriptStrings, request: () => Promise<string>): TranscriptControl {
  const button = h(
    'button',
    { class: 'close transcript', type: 'button', 'aria-label': strings.button, title: strings.button },
    icon(MAIL_ICON),
  );
  const status = h('div', { class: 'banner transcript-status', role: 'status', hidden: true });
  // Information, not the banner's warning colours; set through the CSSOM, which a
  // Content-Security-Policy does not count as an inline style.
  status.style.setProperty('background', '#eef4ff');
  status.style.setProperty('color', '#1d3b6f');
  status.style.setProperty('border-bottom-color', '#c9d8f2');
  const say = (text: string) => {
    status.hidden = false;
    status.textContent = text;
  };
  button.addEventListener('click', () => {
    if (button.getAttribute('aria-busy') === 'true') return;
    button.setAttribute('aria-busy', 'true');
    say(strings.sending);
    request()
      .then((email) => say(strings.sent(email)))
      .catch((err: unknown) => {
        const code = err instanceof ApiError ? err.code : '';
        const status = err instanceof ApiError ? err.status : 0;
        if (code === 'email_unknown') say(strings.noEmail);
        else if (code === 'email_unsubscribed') say(strings.unsubscribed);
        else if (code === 'conversation_empty') say(strings.empty);
        else if (status === 429) say(strings.tooMany);
        else say(strings.failed);
      })
      .finally(() => button.removeAttribute('aria-busy'));
  });
  return { button, status };
}
