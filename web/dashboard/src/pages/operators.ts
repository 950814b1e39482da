import { api } from '../api.ts';
import { field, formatTime, h, show } from '../dom.ts';
import type { PageContext } from '../main.ts';
import type { Operator } from '../types.ts';
import { badge, busy, confirm, say, secretBox, statusLine } from '../ui.ts';

const PERMISSIONS = [
  '*',
  'accounts:create',
  'accounts:read',
  'accounts:edit',
  'services:edit',
  'conversations:read',
  'conversations:reply',
  'conversations:assign',
  'users:delete',
  'deliveries:read',
  'deliveries:manage',
  'operators:manage',
  'audit:read',
];

/** "accounts:read@3, services:edit@*" — the grants as one editable line. */
function grantsText(operator: Operator): string {
  return operator.grants.map((g) => `${g.permission}@${g.accountId ?? '*'}`).join(', ');
}

function parseGrants(text: string): Array<{ permission: string; accountId: number | null }> {
  return text
    .split(/[\s,]+/)
    .filter((t) => t !== '')
    .map((token) => {
      const [permission = '', where = '*'] = token.split('@');
      return { permission, accountId: where === '*' ? null : Number(where) };
    });
}

/**
 * Enabled or disabled, and the button to change it; redrawn in place with the answer. Disabling
 * asks first: it signs the operator out everywhere. One's own row has no button: the server
 * refuses it (cannot_disable_self).
 */
function stateCell(ctx: PageContext, operator: Operator, status: HTMLElement): HTMLElement {
  const cell = h('div', { class: 'row' });
  // After a change the new button takes the focus, so a keyboard user stays on the row.
  const draw = (current: Operator, focus = false) => {
    const state = current.disabledAt ? badge('disabled', 'warn') : badge('enabled', 'ok');
    if (current.id === ctx.me.id) return show(cell, state, h('span', { class: 'hint' }, 'you'));
    const disable = current.disabledAt === null;
    const toggle = h(
      'button',
      {
        type: 'button',
        class: disable ? 'small danger' : 'small secondary',
        'aria-label': `${disable ? 'Disable' : 'Enable'} ${current.email}`,
      },
      disable ? 'Disable' : 'Enable',
    );
    toggle.addEventListener(
      'click',
      () =>
        void busy(toggle, status, async () => {
          if (
            disable &&
            !(await confirm(
              'Disable operator',
              `${current.email} is signed out everywhere and cannot sign in until enabled again. Their grants are kept.`,
              'Disable operator',
            ))
          )
            return;
          const updated = (await api.put<Operator>(`/operators/${current.id}/disabled`, { disabled: disable })).data;
          draw(updated, true);
          say(status, `${current.email} ${disable ? 'disabled' : 'enabled'}.`);
        }),
    );
    show(cell, state, toggle);
    if (focus) toggle.focus();
  };
  draw(operator);
  return cell;
}

/**
 * A reset link (shown once, below the table: Palaver sends no email) and ending every session of
 * the operator. Both ask first.
 */
function accessCell(ctx: PageContext, operator: Operator, status: HTMLElement, shown: HTMLElement): HTMLElement {
  const reset = h(
    'button',
    { type: 'button', class: 'small secondary', 'aria-label': `Password-reset link for ${operator.email}` },
    'Reset link',
  );
  reset.addEventListener(
    'click',
    () =>
      void busy(reset, status, async () => {
        const link = (await api.post<{ url: string; expiresAt: string }>(`/operators/${operator.id}/password-reset`)).data;
        show(
          shown,
          h('h2', { id: 'reset-link-title' }, `Password-reset link for ${operator.email}`),
          secretBox(
            'Password-reset link',
            link.url,
            `Shown once. Palaver sends no email: give this link to ${operator.email} yourself, over a channel you trust. ` +
              `It sets a new password once, until ${formatTime(link.expiresAt)}, and then ends all their sessions.`,
          ),
        );
        shown.hidden = false;
        shown.querySelector('input')?.focus();
      }),
  );
  const end = h('button', { type: 'button', class: 'small danger', 'aria-label': `End sessions of ${operator.email}` }, 'End sessions');
  end.addEventListener(
    'click',
    () =>
      void busy(end, status, async () => {
        const self = operator.id === ctx.me.id;
        const text = self
          ? 'Every session of yours ends, this one included: you will have to sign in again.'
          : `${operator.email} is signed out everywhere. They can sign in again.`;
        if (!(await confirm('End sessions', text, 'End sessions'))) return;
        const { ended } = (await api.delete<{ ended: number }>(`/operators/${operator.id}/sessions`)).data;
        say(status, `${ended} session${ended === 1 ? '' : 's'} of ${operator.email} ended.`);
      }),
  );
  return h('div', { class: 'row' }, operator.twoFactorEnabled ? badge('2FA on', 'ok') : badge('2FA off', 'muted'), reset, end);
}

export async function operatorsPage(ctx: PageContext): Promise<void> {
  const operators = (await api.get<Operator[]>('/operators')).data;
  const status = statusLine();
  const shown = h('section', { class: 'card', hidden: true, 'aria-labelledby': 'reset-link-title' });
  const rows = operators.map((operator) => {
    const grants = h('input', { value: grantsText(operator), 'aria-label': `Grants of ${operator.email}`, spellcheck: 'false' });
    const save = h('button', { type: 'button', class: 'small secondary', 'aria-label': `Save grants of ${operator.email}` }, 'Save');
    save.addEventListener(
      'click',
      () =>
        // One's own grants without operators:manage everywhere are refused (409), said in the status line.
        void busy(save, status, async () => {
          await api.put(`/operators/${operator.id}/grants`, { grants: parseGrants(grants.value) });
          say(status, `Grants of ${operator.email} saved.`);
        }),
    );
    return h(
      'tr',
      {},
      h('td', {}, operator.email),
      h('td', {}, h('code', {}, operator.identifier)),
      h('td', {}, h('div', { class: 'row' }, grants, save)),
      h('td', {}, stateCell(ctx, operator, status)),
      h('td', {}, accessCell(ctx, operator, status, shown)),
      h('td', {}, formatTime(operator.createdAt)),
    );
  });
  const email = h('input', { type: 'email', name: 'email', required: true });
  const password = h('input', { type: 'password', name: 'password', required: true, minlength: 12, autocomplete: 'new-password' });
  const grants = h('input', { name: 'grants', spellcheck: 'false', placeholder: 'accounts:read@3, conversations:read@3' });
  const create = h('button', { type: 'submit' }, 'Create operator');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'new-operator' },
    h('h2', { id: 'new-operator' }, 'New operator'),
    field('Operator email', email),
    field('Initial password', password, 'At least 12 characters, not a common one. Or leave them a reset link after creating them.'),
    field('Grants', grants, `permission@accountId or permission@* (every account). Permissions: ${PERMISSIONS.join(', ')}.`),
    create,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(create, status, async () => {
      await api.post('/operators', { email: email.value, password: password.value, grants: parseGrants(grants.value) });
      await operatorsPage(ctx);
    });
  });
  show(
    ctx.main,
    h('h1', {}, 'Operators'),
    h(
      'section',
      { class: 'card table-wrap' },
      h(
        'table',
        { class: 'operators' },
        h('caption', { class: 'visually-hidden' }, 'Operators'),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Email'),
            h('th', { scope: 'col' }, 'Identifier'),
            h('th', { scope: 'col' }, 'Grants'),
            h('th', { scope: 'col' }, 'State'),
            h('th', { scope: 'col' }, 'Sign-in'),
            h('th', { scope: 'col' }, 'Created'),
          ),
        ),
        h('tbody', {}, ...rows),
      ),
    ),
    status,
    shown,
    form,
  );
}
