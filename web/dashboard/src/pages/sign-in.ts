import { api } from '../api.ts';
import { field, h, show } from '../dom.ts';
import type { SignInOptions } from '../types.ts';
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
 * The sign-in page: the password form unless the server turned passwords off, and "Sign in with
 * <provider>" when single sign-on is on. `refusal`: why a single sign-on came back refused.
 */
export async function signInPage(
  root: HTMLElement,
  signedIn: (token: string) => Promise<void>,
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
        const answer = await api.post<{ token: string }>('/login', { email: email.value, password: password.value });
        await signedIn(answer.data.token);
      });
    });
    first = email;
  }
  card.append(status);
  show(root, h('main', { class: 'centered' }, card));
  if (refusal) say(status, refusal, 'error');
  first?.focus();
}

/** The one-time code a finished single sign-on left in the address, for the operator's token. */
export async function finishSingleSignOn(code: string): Promise<string> {
  return (await api.post<{ token: string }>('/sso/exchange', { code })).data.token;
}
