// The head of the conversation open on the conversations page: who the customer is, the agent
// answering, erasing the user (GDPR) and changing the owner Service.
import { api } from '../api.ts';
import { customerName } from '../customer-name.ts';
import { field, formatTime, h } from '../dom.ts';
import type { PageContext } from '../page.ts';
import { can } from '../permissions.ts';
import type { AccountOverview, Agent, UserSummary } from '../types.ts';
import { badge, busy, confirm, say, statusLine } from '../ui.ts';

export interface HeadingInput {
  account: AccountOverview;
  services: Map<number, string>;
  userId: number;
  /** Null when the user is not among the account's users (erased meanwhile). */
  user: UserSummary | undefined;
  agent: Agent | null;
  /** The user was erased. */
  erased: () => void;
  /** The owner changed: the list and the conversation are read again. */
  ownerChanged: () => Promise<void>;
}

export function conversationHeading(ctx: PageContext, input: HeadingInput): Array<HTMLElement | null> {
  const { account, services, userId, user, agent } = input;
  const status = statusLine();
  const erase = can(ctx.me.grants, 'users:delete', account.id)
    ? h('button', { type: 'button', class: 'danger' }, 'Delete user (GDPR)')
    : null;
  erase?.addEventListener(
    'click',
    () =>
      void (async () => {
        if (
          !(await confirm(
            'Delete user',
            'The user, their messages, files, devices and deliveries are erased for good. This cannot be undone.',
            'Delete for good',
          ))
        )
          return;
        await busy(erase, status, async () => {
          await api.delete(`/accounts/${account.id}/users/${userId}`);
          input.erased();
        });
      })(),
  );
  return [
    h(
      'div',
      { class: 'row spread' },
      h(
        'div',
        { class: 'row' },
        h('h2', {}, user ? customerName(user) : `User ${userId}`),
        agent ? badge(`agent: ${agent.name}`, 'ok') : null,
      ),
      erase,
    ),
    user
      ? h(
          'p',
          { class: 'hint' },
          `${user.kind === 'registered' ? 'Registered' : 'Anonymous'} · owner ${services.get(user.ownerServiceId) ?? 'Service'} · since ${formatTime(user.createdAt)}`,
        )
      : null,
    status,
    user ? ownerSection(ctx, account, user, input.ownerChanged) : null,
  ];
}

/**
 * The owner Service of the conversation. An operator's change is delivered as changeOwner to the
 * old and the new owner, `initiatedBy` naming the operator (docs/dashboard.md).
 */
function ownerSection(ctx: PageContext, account: AccountOverview, user: UserSummary, changed: () => Promise<void>): HTMLElement {
  const editable = can(ctx.me.grants, 'services:edit', account.id);
  const select = h(
    'select',
    { name: 'owner', disabled: !editable },
    ...[...account.services, ...(account.inbox ? [account.inbox] : [])].map((s) =>
      h('option', { value: s.identification, selected: s.id === user.ownerServiceId }, s.name),
    ),
  );
  const button = h('button', { type: 'submit', class: 'secondary', disabled: !editable }, 'Change owner');
  const status = statusLine();
  const form = h(
    'form',
    { class: 'row owner' },
    field('Owner Service', select),
    button,
    editable ? null : h('span', { class: 'hint' }, 'Changing the owner needs the services:edit permission.'),
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(button, status, async () => {
      const answer = await api.put<{ changed: boolean }>(`/accounts/${account.id}/users/${user.id}/owner`, {
        serviceIdentification: select.value,
      });
      say(status, answer.data.changed ? 'Owner changed; both Services are told.' : 'That Service already owns it.');
      if (answer.data.changed) await changed();
    });
  });
  return form;
}
