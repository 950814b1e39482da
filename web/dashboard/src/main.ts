// The operator dashboard: sign-in, then pages chosen by the address's hash (#/accounts/3…), so
// the server serves one HTML shell and every page is a bookmarkable address.
import { api, ssoErrorText, whenSignedOut } from './api.ts';
import { h, show } from './dom.ts';
import { connectLive, disconnectLive } from './live.ts';
import { session } from './session.ts';
import type { Me } from './types.ts';
import { accountPage } from './pages/account.ts';
import { accountsPage } from './pages/accounts.ts';
import { conversationsPage } from './pages/conversations.ts';
import { inboxPage } from './pages/inbox.ts';
import { operatorsPage } from './pages/operators.ts';
import { servicePage } from './pages/service.ts';
import { finishSingleSignOn, resetPasswordPage, secondStep, signInPage } from './pages/sign-in.ts';
import { mePage } from './pages/me.ts';
import type { Page } from './page.ts';
import { auditPage } from './pages/audit.ts';
import { can } from './permissions.ts';
import { errorText } from './ui.ts';

const ROUTES: Array<[RegExp, Page]> = [
  [/^#?\/?(?:accounts)?$/, accountsPage],
  [/^#\/accounts\/(\d+)$/, accountPage],
  [/^#\/accounts\/(\d+)\/services\/(\d+)$/, servicePage],
  [/^#\/accounts\/(\d+)\/conversations$/, conversationsPage],
  [/^#\/accounts\/(\d+)\/conversations\/(\d+)$/, conversationsPage],
  [/^#\/accounts\/(\d+)\/inbox$/, inboxPage],
  [/^#\/accounts\/(\d+)\/inbox\/(\d+)$/, inboxPage],
  [/^#\/operators$/, operatorsPage],
  [/^#\/me$/, mePage],
  [/^#\/audit$/, auditPage],
];

/** A reset link's page: served before, and without, any session. */
const RESET = /^#\/reset-password\/([\w-]+)$/;

const root = document.getElementById('app') as HTMLElement;
let me: Me | null = null;
let leaving: Array<() => void> = [];

async function signedIn(): Promise<Me | null> {
  if (!session.token) return null;
  try {
    return (await api.get<Me>('/session')).data;
  } catch {
    return null;
  }
}

function layout(operator: Me): HTMLElement {
  const main = h('main', { id: 'main', tabindex: '-1' });
  const signOut = h('button', { type: 'button', class: 'secondary' }, 'Sign out');
  signOut.addEventListener('click', () => {
    signOut.disabled = true;
    // Ended on the server first: the token is refused from now on, wherever it was copied.
    api
      .delete('/session')
      .catch(() => undefined)
      .finally(() => {
        session.clear();
        disconnectLive();
        me = null;
        location.hash = '';
        void start();
      });
  });
  const links: Array<[string, string]> = [['#/accounts', 'Accounts']];
  if (can(operator.grants, 'operators:manage', null)) links.push(['#/operators', 'Operators']);
  // audit:read on some account or everywhere: the page shows what it allows.
  if (operator.grants.some((g) => g.permission === '*' || g.permission === 'audit:read')) links.push(['#/audit', 'Audit log']);
  links.push(['#/me', 'Your account']);
  const header = h(
    'header',
    { class: 'top' },
    h(
      'a',
      {
        class: 'skip',
        href: '#main',
        onclick: (e: Event) => {
          e.preventDefault();
          main.focus();
        },
      },
      'Skip to content',
    ),
    h('a', { class: 'brand', href: '#/accounts' }, 'Palaver'),
    h('nav', { 'aria-label': 'Main' }, ...links.map(([href, text]) => h('a', { href, 'data-nav': href }, text))),
    h('span', { class: 'who' }, operator.email),
    signOut,
  );
  // Grants withheld until the operator enrols: said on every page, with the way to fix it.
  const required = operator.twoFactor.requiredBy;
  const banner =
    required.length > 0 && !operator.twoFactor.enabled
      ? h(
          'p',
          { class: 'banner', role: 'alert' },
          `Account${required.length > 1 ? 's' : ''} ${required.join(', ')} require${required.length > 1 ? '' : 's'} two-factor sign-in: your grants there are unused until you `,
          h('a', { href: '#/me' }, 'set it up on Your account'),
          '.',
        )
      : null;
  show(root, header, banner, main);
  return main;
}

async function route(): Promise<void> {
  if (!me) return;
  for (const cleanup of leaving) cleanup();
  leaving = [];
  const main = document.getElementById('main') ?? layout(me);
  const hash = location.hash;
  for (const link of root.querySelectorAll<HTMLAnchorElement>('nav a')) {
    const current =
      hash.startsWith(link.getAttribute('data-nav') ?? '-') || (hash === '' && link.getAttribute('data-nav') === '#/accounts');
    if (current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const found = ROUTES.map(([pattern, page]) => [pattern.exec(hash), page] as const).find(([match]) => match);
  show(main, h('p', { class: 'loading' }, 'Loading…'));
  if (!found) {
    show(main, h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/accounts' }, 'Back to the accounts')));
    return;
  }
  const [match, page] = found;
  const params = (match ?? [])
    .slice(1)
    .filter((p) => p !== undefined)
    .map(Number);
  try {
    await page({ main, me, onLeave: (cleanup) => leaving.push(cleanup), refresh: start }, ...params);
  } catch (err) {
    show(main, h('h1', {}, 'Something went wrong'), h('p', { role: 'alert', class: 'status error' }, errorText(err)));
  }
}

/**
 * What a single sign-on left in the address (#sso-code=… or #sso-error=…), taken out of it at
 * once so that neither stays in the address bar or the history entry.
 */
function ssoReturn(): { code: string | null; error: string | null } {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const code = fragment.get('sso-code');
  const error = fragment.get('sso-error');
  if (code !== null || error !== null) history.replaceState(null, '', `${location.pathname}${location.search}`);
  return { code, error };
}

async function signedInWith(token: string): Promise<void> {
  session.set(token);
  if (RESET.test(location.hash)) location.hash = '';
  await start();
}

async function signIn(notice?: string, refusal: string | null = null): Promise<void> {
  await signInPage(root, signedInWith, notice, refusal);
}

async function start(): Promise<void> {
  const reset = RESET.exec(location.hash);
  if (reset?.[1]) {
    // Whoever opens a reset link sets that operator's password; a session open in this tab ends.
    if (session.token) await api.delete('/session').catch(() => undefined);
    session.clear();
    disconnectLive();
    me = null;
    resetPasswordPage(root, reset[1], () => {
      history.replaceState(null, '', location.pathname);
      void signIn('Password set. Sign in with it.');
    });
    return;
  }
  const sso = ssoReturn();
  let refusal = sso.error === null ? null : ssoErrorText(sso.error);
  if (sso.code) {
    try {
      const answer = await finishSingleSignOn(sso.code);
      if (!('token' in answer)) {
        // Two-factor sign-in on: the provider's sign-in stands for the password, not for the code.
        session.clear();
        secondStep(root, answer.challenge, signedInWith);
        return;
      }
      session.set(answer.token);
    } catch (err) {
      refusal = errorText(err);
    }
  }
  me = await signedIn();
  if (!me) {
    session.clear();
    await signIn(undefined, refusal);
    return;
  }
  connectLive(session.token ?? '');
  layout(me);
  await route();
}

whenSignedOut(() => {
  me = null;
  disconnectLive();
  void start();
});
window.addEventListener('hashchange', () => void (RESET.test(location.hash) ? start() : route()));
void start();
