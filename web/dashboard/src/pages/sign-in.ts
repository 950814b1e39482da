import { api } from '../api.ts';
import { field, h, show } from '../dom.ts';
import type { LoginAnswer } from '../types.ts';
import { busy, say, statusLine } from '../ui.ts';

export function signInPage(root: HTMLElement, signedIn: (token: string) => Promise<void>, notice?: string): void {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const status = statusLine();
  if (notice) say(status, notice);
  const form = h(
    'form',
    { class: 'card sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, 'Palaver'),
    h('p', { class: 'hint' }, 'Sign in to the operator dashboard.'),
    field('Email', email),
    field('Password', password),
    button,
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(button, status, async () => {
      say(status, 'Signing in…');
      const answer = (await api.post<LoginAnswer>('/login', { email: email.value, password: password.value })).data;
      if ('token' in answer) await signedIn(answer.token);
      // The password alone gives no session: the second step turns the challenge into one.
      else secondStep(root, answer.challenge, signedIn);
    });
  });
  show(root, h('main', { class: 'centered' }, form));
  email.focus();
}

/** The code from the authenticator app (or a recovery code), after a right password. */
function secondStep(root: HTMLElement, challenge: string, signedIn: (token: string) => Promise<void>): void {
  const code = h('input', {
    name: 'code',
    autocomplete: 'one-time-code',
    inputmode: 'numeric',
    required: true,
    spellcheck: 'false',
    maxlength: 64,
  });
  const button = h('button', { type: 'submit' }, 'Verify');
  const status = statusLine();
  const form = h(
    'form',
    { class: 'card sign-in', 'aria-labelledby': 'second-step-title' },
    h('h1', { id: 'second-step-title' }, 'Two-factor sign-in'),
    field(
      'Authentication code',
      code,
      'The 6-digit code your authenticator app shows for Palaver. Lost the app? Type one of your recovery codes instead.',
    ),
    button,
    h('p', {}, h('a', { href: '#', onclick: (e: Event) => (e.preventDefault(), signInPage(root, signedIn)) }, 'Start again')),
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(button, status, async () => {
      say(status, 'Checking the code…');
      const answer = await api.post<{ token: string }>('/login/two-factor', { challenge, code: code.value.trim() });
      await signedIn(answer.data.token);
    });
  });
  show(root, h('main', { class: 'centered' }, form));
  code.focus();
}

/**
 * The page of a reset link (#/reset-password/<token>): a new password, with no session. The
 * token came in the address's fragment, which no server sees.
 */
export function resetPasswordPage(root: HTMLElement, token: string, done: () => void): void {
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'new-password', required: true, minlength: 12 });
  const again = h('input', { type: 'password', name: 'again', autocomplete: 'new-password', required: true, minlength: 12 });
  const button = h('button', { type: 'submit' }, 'Set password');
  const status = statusLine();
  const form = h(
    'form',
    { class: 'card sign-in', 'aria-labelledby': 'reset-title' },
    h('h1', { id: 'reset-title' }, 'Set a new password'),
    field('New password', password, 'At least 12 characters, and not one of the most common passwords.'),
    field('New password, again', again),
    button,
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (password.value !== again.value) {
      say(status, 'The two passwords differ.', 'error');
      again.focus();
      return;
    }
    void busy(button, status, async () => {
      await api.post('/password-reset', { token, password: password.value });
      done();
    });
  });
  show(root, h('main', { class: 'centered' }, form));
  password.focus();
}
