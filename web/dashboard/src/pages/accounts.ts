import { api } from '../api.ts';
import { field, formatTime, h, show } from '../dom.ts';
import type { PageContext } from '../page.ts';
import { can } from '../permissions.ts';
import type { Account, CreatedAccount } from '../types.ts';
import { busy, say, secretBox, statusLine } from '../ui.ts';

export async function accountsPage(ctx: PageContext): Promise<void> {
  const accounts = (await api.get<Account[]>('/accounts').catch(() => ({ data: [] as Account[] }))).data;
  const list =
    accounts.length === 0
      ? h(
          'p',
          { class: 'empty' },
          // Without a grant on every account, an empty list means no grant on any (each names an account).
          can(ctx.me.grants, 'accounts:read', null) || can(ctx.me.grants, 'accounts:create', null)
            ? 'No accounts yet.'
            : 'No account you may read. Ask an operator who manages operators for a grant.',
        )
      : h(
          'table',
          {},
          h('caption', { class: 'visually-hidden' }, 'Accounts'),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'col' }, 'Name'),
              h('th', { scope: 'col' }, 'Identification'),
              h('th', { scope: 'col' }, 'Created'),
            ),
          ),
          h(
            'tbody',
            {},
            ...accounts.map((a) =>
              h(
                'tr',
                {},
                h('td', {}, h('a', { href: `#/accounts/${a.id}` }, a.name)),
                h('td', {}, h('code', {}, a.identification)),
                h('td', {}, formatTime(a.createdAt)),
              ),
            ),
          ),
        );
  show(ctx.main, h('h1', {}, 'Accounts'), h('section', { class: 'card', 'aria-label': 'Account list' }, list), createForm(ctx));
}

function createForm(ctx: PageContext): HTMLElement | null {
  if (!can(ctx.me.grants, 'accounts:create', null)) return null;
  const name = h('input', { name: 'name', required: true, maxlength: 255 });
  const button = h('button', { type: 'submit' }, 'Create account');
  const status = statusLine();
  const result = h('div', {});
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'new-account' },
    h('h2', { id: 'new-account' }, 'New account'),
    field('Account name', name),
    button,
    status,
    result,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(button, status, async () => {
      const created = (await api.post<CreatedAccount>('/accounts', { name: name.value })).data;
      say(status, `Account ${created.name} created.`);
      form.reset();
      show(
        result,
        secretBox('Account identification', created.identification, 'Public: the widget and apps send it.'),
        secretBox(
          'Authorization secret',
          created.authorizationSecret,
          'Shown once: your backend signs registered users with it. Copy it now.',
        ),
        h('p', {}, h('a', { href: `#/accounts/${created.id}` }, `Open ${created.name}`)),
      );
    });
  });
  return form;
}
