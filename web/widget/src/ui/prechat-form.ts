// The pre-chat form (docs/widget.md): the visitor's email, and name when the account asks for
// it, before the first message (required) or after it (skippable). Checked here as the visitor
// types it, then by Palaver (PUT /users/me/contact), whose refusal of a field shows on it.
import type { ReachStrings } from '../reach-strings.ts';
import { h } from './dom.ts';

export interface PrechatFormOptions {
  strings: ReachStrings;
  askName: boolean;
  /** Before the first message: no Skip, and the composer waits for it. */
  required: boolean;
  submit(values: { name: string | null; email: string }): Promise<'saved' | 'invalid_email' | 'failed'>;
  skip(): void;
}

// What browsers' own type=email check accepts, roughly: one @, a dot in the domain, no spaces.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

let formCount = 0;

export function prechatForm(options: PrechatFormOptions): HTMLFormElement {
  const s = options.strings;
  const id = `palaver-prechat-${++formCount}`;
  const field = (name: string, label: string, attributes: Record<string, string>) => {
    const input = h('input', { id: `${id}-${name}`, name, 'aria-describedby': `${id}-${name}-error`, ...attributes });
    const error = h('p', { class: 'field-error', id: `${id}-${name}-error`, hidden: true });
    const wrapper = h('div', { class: 'field' }, h('label', { for: `${id}-${name}` }, label), input, error);
    const show = (text: string | null) => {
      error.hidden = text === null;
      error.textContent = text ?? '';
      if (text === null) input.removeAttribute('aria-invalid');
      else input.setAttribute('aria-invalid', 'true');
    };
    return { input, wrapper, show };
  };
  const name = options.askName
    ? field('name', s.name, { type: 'text', autocomplete: 'name', maxlength: '200', required: 'required' })
    : null;
  const email = field('email', s.email, {
    type: 'email',
    autocomplete: 'email',
    maxlength: '254',
    required: 'required',
    inputmode: 'email',
  });
  const status = h('p', { class: 'form-status', role: 'status' });
  const submit = h('button', { class: 'primary-button', type: 'submit' }, options.required ? s.start : s.save);
  const skip = options.required ? null : h('button', { class: 'link-button', type: 'button' }, s.skip);
  const form = h(
    'form',
    { class: 'prechat', 'aria-labelledby': `${id}-title`, novalidate: true },
    h('h3', { id: `${id}-title` }, options.required ? s.formTitleBefore : s.formTitleAfter),
    h('p', { class: 'intro' }, options.required ? s.formIntroBefore : s.formIntroAfter),
    name?.wrapper,
    email.wrapper,
    status,
    h('div', { class: 'actions' }, skip, submit),
  );

  const check = (): boolean => {
    const nameValue = name?.input.value.trim() ?? '';
    const emailValue = email.input.value.trim();
    name?.show(nameValue === '' ? s.nameRequired : null);
    email.show(EMAIL.test(emailValue) ? null : s.emailInvalid);
    return (!name || nameValue !== '') && EMAIL.test(emailValue);
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (submit.disabled) return;
    if (!check()) {
      (name && name.input.getAttribute('aria-invalid') ? name.input : email.input).focus();
      return;
    }
    submit.disabled = true;
    status.textContent = s.saving;
    void options.submit({ name: name ? name.input.value.trim() : null, email: email.input.value.trim() }).then((outcome) => {
      submit.disabled = false;
      status.textContent = outcome === 'failed' ? s.saveFailed : '';
      if (outcome === 'invalid_email') {
        email.show(s.emailInvalid);
        email.input.focus();
      }
    });
  });
  // A field's error goes as soon as it is put right, not at the next submit.
  for (const f of [name, email])
    f?.input.addEventListener('input', () => {
      if (f.input.getAttribute('aria-invalid')) check();
    });
  skip?.addEventListener('click', () => options.skip());
  return form;
}

/** The first field of a form, to take focus when it appears. */
export function firstField(form: HTMLElement): HTMLInputElement | null {
  return form.querySelector('input');
}
