import { api } from '../api.ts';
import { field, h, show } from '../dom.ts';
import { busy, say, statusLine } from '../ui.ts';

export function signInPage(root: HTMLElement, signedIn: (token: string) => Promise<void>): void {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const status = statusLine();
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
      const answer = await api.post<{ token: string }>('/login', { email: email.value, password: password.value });
      await signedIn(answer.data.token);
    });
  });
  show(root, h('main', { class: 'centered' }, form));
  email.focus();
}
