import { api } from '../api.ts';
import { field, h, show } from '../dom.ts';
import type { LoginAnswer, SignInOptions } from '../types.ts';
import { busy, say, statusLine } from '../ui.ts';

/** How this server lets operators in; passwords only when it cannot be asked (it answers the same way). */
async function signInOptions(): Promise<SignInOptions> {
  try {
    return (await api.get<SignInOptions>('/login')).data;
  } catch {
    return { password: true, sso: null };
  }
}

/**
 * The sign-in page: the password form (then the two-factor step when the operator has it) unless
 * the server turned passwords off, and "Sign in with <provider>" when single sign-on is on.
 * `notice`: a word to start with (a password just set); `refusal`: why a single sign-on came back
 * refused. A refused password (429 included, with how long to wait) is said in the status line.
 */
export async function signInPage(
  root: HTMLElement,
  signedIn: (token: string) => Promise<void>,
  notice?: string,
  refusal: string | null = null,
): Promise<void> {
  const options = await signInOptions();
  const status = statusLine();
  const card = h(
    'form',
    { class: 'card sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, 'Palaver'),
    h('p', { class: 'hint' }, 'Sign in to the operator dashboard.'),
  );
  let first: HTMLElement | null = null;
  if (options.sso) {
    // A plain link: the browser itself goes to the provider and comes back (no script, no CSP form-action).
    const sso = h('a', { class: 'button-link sso', href: options.sso.startUrl }, `Sign in with ${options.sso.name}`);
    card.append(sso);
    first = sso;
    if (options.password) card.append(h('p', { class: 'or' }, h('span', {}, 'or with your password')));
  }
  if (options.password) {
    const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
    const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
    const button = h('button', { type: 'submit' }, 'Sign in');
    card.append(field('Email', email), field('Password', password), button);
    card.addEventListener('submit', (event) => {
      event.preventDefault();
      void busy(button, status, async () => {
        say(status, 'Signing in…');
        const answer = (await api.post<LoginAnswer>('/login', { email: email.value, password: password.value })).data;
        if ('token' in answer) await signedIn(answer.token);
        // The password alone gives no session: the second step turns the challenge into one.
        else secondStep(root, answer.challenge, signedIn);
      });
    });
    first = email;
  }
  card.append(status);
  show(root, h('main', { class: 'centered' }, card));
  if (refusal) say(status, refusal, 'error');
  else if (notice) say(status, notice);
  first?.focus();
}

/**
 * The one-time code a finished single sign-on left in the address, for the operator's token; or,
 * for an operator with two-factor sign-in, the challenge of the code step (as after a password).
 */
export async function finishSingleSignOn(code: string): Promise<LoginAnswer> {
  return (await api.post<LoginAnswer>('/sso/exchange', { code })).data;
}

/** The code from the authenticator app (or a recovery code), after a right password or a single sign-on. */
export function secondStep(root: HTMLElement, challenge: string, signedIn: (token: string) => Promise<void>): void {
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
    h('p', {}, h('a', { href: '#', onclick: (e: Event) => (e.preventDefault(), void signInPage(root, signedIn)) }, 'Start again')),
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
