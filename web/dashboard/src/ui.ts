// Shared pieces of the pages: messages in a live region, secrets shown once with a copy
// button, a confirmation dialog, a busy button.
import { ApiError } from './api.ts';
import { h, show } from './dom.ts';

/** A polite live region: screen readers announce what appears in it. */
export function statusLine(): HTMLParagraphElement {
  return h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
}

export function say(line: HTMLElement, text: string, kind: 'ok' | 'error' = 'ok'): void {
  line.className = `status ${kind}`;
  line.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  line.textContent = text;
}

export function errorText(err: unknown): string {
  return err instanceof ApiError ? err.message : err instanceof Error ? err.message : String(err);
}

/** Runs `action` with the button disabled, reporting a failure in `line`. */
export async function busy(button: HTMLButtonElement, line: HTMLElement | null, action: () => Promise<void>): Promise<void> {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    await action();
  } catch (err) {
    if (line) say(line, errorText(err), 'error');
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}

/** A secret as the API shows it once: read-only, selectable, with a copy button. */
export function secretBox(label: string, value: string, note = 'Shown once: copy it now.'): HTMLDivElement {
  const copied = statusLine();
  const input = h('input', { readonly: true, value, 'aria-label': label, class: 'secret', spellcheck: 'false' });
  const copy = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      'aria-label': `Copy ${label}`,
      onclick: () => {
        input.select();
        navigator.clipboard?.writeText(value).then(
          () => say(copied, 'Copied.'),
          () => say(copied, 'Selected: press Ctrl+C to copy.'),
        );
      },
    },
    'Copy',
  );
  return h(
    'div',
    { class: 'secret-box' },
    h('span', { class: 'secret-label' }, label),
    h('div', { class: 'row' }, input, copy),
    h('p', { class: 'hint' }, note),
    copied,
  );
}

/** A modal confirmation; resolves true when confirmed. Escape and Cancel resolve false. */
export function confirm(title: string, text: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h('dialog', { class: 'confirm', 'aria-label': title });
    const done = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    show(
      dialog,
      h('h2', {}, title),
      h('p', {}, text),
      h(
        'div',
        { class: 'row end' },
        h('button', { type: 'button', class: 'secondary', onclick: () => done(false) }, 'Cancel'),
        h('button', { type: 'button', class: 'danger', onclick: () => done(true) }, confirmLabel),
      ),
    );
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      done(false);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}

export function badge(text: string, kind: 'ok' | 'warn' | 'error' | 'muted' = 'muted'): HTMLSpanElement {
  return h('span', { class: `badge ${kind}` }, text);
}
