// The dashboard's DOM helpers: the shared element builder (web/shared/dom.ts) and what forms and
// pages add to it. Pages build their DOM with h() and re-render a section by replacing its children.
import { h } from '../../shared/dom.ts';

export { append, h, show } from '../../shared/dom.ts';

let ids = 0;
/** An id for a label's `for`. */
export function uid(prefix: string): string {
  ids += 1;
  return `${prefix}-${ids}`;
}

/** A labelled input: the label names the control for screen readers and tests. */
export function field(label: string, input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, hint?: string): HTMLDivElement {
  const id = input.id || uid('f');
  input.id = id;
  const hintId = hint ? `${id}-hint` : undefined;
  if (hintId) input.setAttribute('aria-describedby', hintId);
  return h('div', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('p', { class: 'hint', id: hintId }, hint) : null);
}

export function formatTime(iso: string | number): string {
  const date = typeof iso === 'number' ? new Date(iso * 1000) : new Date(iso);
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}
