// The after-hours notice at the top of the conversation (docs/widget.md; the header says the
// team is away): when it is back (in the visitor's clock), and where the answer will go: the email the widget
// knows, or an invitation to leave one (the form below the conversation).
import { h } from './dom.ts';

export function hoursNotice(lines: { back: string; where: string }): HTMLElement {
  return h(
    'div',
    { class: 'hours-notice', role: 'status' },
    h('span', { class: 'moon', 'aria-hidden': 'true' }, '☾'),
    h('div', {}, h('p', { class: 'away' }, lines.back), h('p', {}, lines.where)),
  );
}

/** A short line under the header's heading or in the notice slot (the email link's outcome). */
export function infoLine(text: string): HTMLElement {
  return h('div', { class: 'link-note', role: 'status' }, text);
}
