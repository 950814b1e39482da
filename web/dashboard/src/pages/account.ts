import { api } from '../api.ts';
import { field, h, show } from '../dom.ts';
import type { PageContext } from '../page.ts';
import { can, sendContentRefusal } from '../permissions.ts';
import type { AccountOverview, Service } from '../types.ts';
import { badge, busy, say, secretBox, statusLine } from '../ui.ts';
import { chatSettingsSection } from './chat-settings.ts';
import { secretRotationSection } from './secret-rotation.ts';
import { privateAddressWarning } from './webhook-url.ts';

export async function accountPage(ctx: PageContext, accountId: number): Promise<void> {
  await render(ctx, accountId, null);
}

/** The page, read afresh; `created` (a new Service's secrets, shown once) stays on top of the Services. */
async function render(ctx: PageContext, accountId: number, created: HTMLElement | null): Promise<void> {
  const account = (await api.get<AccountOverview>(`/accounts/${accountId}`)).data;
  const mayRead = can(ctx.me.grants, 'conversations:read', accountId);
  const services = h('div', {}, serviceList(account));
  show(
    ctx.main,
    h('p', { class: 'crumbs' }, h('a', { href: '#/accounts' }, 'Accounts'), ' / ', account.name),
    h('h1', {}, account.name),
    mayRead
      ? h(
          'p',
          { class: 'row' },
          h('a', { class: 'button-link', href: `#/accounts/${accountId}/inbox` }, 'Inbox'),
          h('a', { class: 'button-link', href: `#/accounts/${accountId}/conversations` }, 'Conversations'),
        )
      : null,
    h(
      'div',
      { class: 'columns' },
      h(
        'div',
        {},
        servicesSection(ctx, account, created, services),
        // The list shows the new default at once (its badge), the rest of the page as it was.
        defaultServiceSection(ctx, account, (changed) => services.replaceChildren(serviceList(changed))),
      ),
      h(
        'div',
        {},
        settingsSection(ctx, account),
        chatSettingsSection(ctx, account),
        snippetSection(account),
        authorizationSecretSection(ctx, account),
      ),
    ),
  );
}

function settingsSection(ctx: PageContext, account: AccountOverview): HTMLElement {
  const editable = can(ctx.me.grants, 'accounts:edit', account.id);
  const name = h('input', { name: 'name', value: account.name, required: true, disabled: !editable });
  const welcome = h('textarea', { name: 'welcomeMessage', rows: 2, disabled: !editable });
  welcome.value = account.welcomeMessage ?? '';
  const sticky = h('textarea', { name: 'stickyMessage', rows: 2, disabled: !editable });
  sticky.value = account.stickyMessage ?? '';
  const origins = h('textarea', { name: 'allowedOrigins', rows: 3, disabled: !editable, spellcheck: 'false' });
  origins.value = account.allowedOrigins.join('\n');
  const requireTwoFactor = h('input', {
    type: 'checkbox',
    name: 'requireTwoFactor',
    checked: account.requireTwoFactor,
    disabled: !editable,
    'aria-describedby': 'require-two-factor-hint',
  });
  const button = h('button', { type: 'submit', disabled: !editable }, 'Save settings');
  const status = statusLine();
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'settings-title' },
    h('h2', { id: 'settings-title' }, 'Settings'),
    field('Name', name),
    field('Welcome message', welcome, 'Shown to a user before their first message.'),
    field('Sticky message', sticky, 'Shown above every conversation.'),
    field('Allowed widget origins', origins, 'One origin per line, such as https://shop.example. Empty: any origin.'),
    h(
      'div',
      { class: 'field check' },
      h('label', {}, requireTwoFactor, ' Require two-factor sign-in'),
      h(
        'p',
        { class: 'hint', id: 'require-two-factor-hint' },
        'Operators with grants on this account use them only once they sign in with a code from an authenticator app. Turn it on for yourself first (Your account).',
      ),
    ),
    button,
    editable ? null : h('p', { class: 'hint' }, 'You need the accounts:edit permission to change these.'),
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(button, status, async () => {
      const text = (area: HTMLTextAreaElement) => (area.value.trim() === '' ? null : area.value);
      await api.patch(`/accounts/${account.id}`, {
        name: name.value,
        welcomeMessage: text(welcome),
        stickyMessage: text(sticky),
        allowedOrigins: origins.value.split(/\s+/).filter((o) => o !== ''),
        // Sent only when changed: the server refuses turning it on for an operator without it.
        ...(requireTwoFactor.checked !== account.requireTwoFactor ? { requireTwoFactor: requireTwoFactor.checked } : {}),
      });
      account.requireTwoFactor = requireTwoFactor.checked;
      say(status, 'Settings saved.');
    });
  });
  return form;
}

function snippetSection(account: AccountOverview): HTMLElement {
  const snippet = `<script src="${location.origin}/widget.js" data-account="${account.identification}" async></script>`;
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'embed-title' },
    h('h2', { id: 'embed-title' }, 'Embed the widget'),
    h('p', { class: 'hint' }, 'Paste this into the pages where the chat should appear.'),
    secretBox('Embed snippet', snippet, 'Add the page origins to the allowed widget origins.'),
    h('p', {}, 'Account identification: ', h('code', {}, account.identification)),
  );
}

function defaultServiceSection(ctx: PageContext, account: AccountOverview, changed: (account: AccountOverview) => void): HTMLElement {
  // New conversations go to the default Service's webhook.
  const refused = sendContentRefusal(ctx.me.grants, 'services:edit', account.id, 'Changing the default Service');
  const editable = refused === null;
  const select = h(
    'select',
    { name: 'defaultService', disabled: !editable || account.services.length === 0 },
    ...[...account.services, ...(account.inbox ? [account.inbox] : [])].map((s) =>
      h('option', { value: s.identification, selected: s.isDefault }, s.name),
    ),
  );
  const reason = editable ? null : h('p', { class: 'hint', id: 'default-reason' }, refused);
  const button = h('button', { type: 'submit', disabled: !editable || account.services.length === 0 }, 'Change default Service');
  if (reason) {
    select.setAttribute('aria-describedby', 'default-reason');
    button.setAttribute('aria-describedby', 'default-reason');
  }
  const status = statusLine();
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'default-title' },
    h('h2', { id: 'default-title' }, 'Default Service'),
    h('p', { class: 'hint' }, 'New users belong to it. A change is delivered to every Service as changeDefaultService.'),
    field('Default Service', select),
    button,
    reason,
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(button, status, async () => {
      const answer = await api.put<AccountOverview & { changed: boolean }>(`/accounts/${account.id}/default-service`, {
        serviceIdentification: select.value,
      });
      changed(answer.data);
      say(
        status,
        answer.data.changed
          ? `${answer.data.defaultService?.name ?? 'The Service'} is now the default; every Service is told.`
          : 'That Service already is the default.',
      );
    });
  });
  return form;
}

/** The account's Services, the default one and the disabled ones marked. */
function serviceList(account: AccountOverview): HTMLElement {
  const rows = account.services.map((s: Service) =>
    h(
      'li',
      { class: 'service-row' },
      h('a', { href: `#/accounts/${account.id}/services/${s.id}` }, s.name),
      ' ',
      s.isDefault ? badge('default', 'ok') : null,
      ' ',
      s.enabled ? null : badge('disabled', 'warn'),
      h('div', { class: 'hint' }, s.webhookUrl ?? 'No webhook URL'),
    ),
  );
  return rows.length
    ? h('ul', { class: 'plain' }, ...rows)
    : h('p', { class: 'empty' }, 'No Service yet: create one to receive conversations.');
}

function servicesSection(ctx: PageContext, account: AccountOverview, created: HTMLElement | null, list: HTMLElement): HTMLElement {
  const section = h(
    'section',
    { class: 'card', 'aria-labelledby': 'services-title' },
    h('h2', { id: 'services-title' }, 'Services'),
    created,
    list,
  );
  if (!can(ctx.me.grants, 'services:edit', account.id)) return section;
  // The answer holds the new Service's API key, which reads every conversation of the account.
  const refused = sendContentRefusal(ctx.me.grants, 'services:edit', account.id, 'Creating a Service (its API key reads conversations)');
  if (refused !== null) {
    section.append(h('p', { class: 'hint' }, refused));
    return section;
  }
  const name = h('input', { name: 'serviceName', required: true, maxlength: 255 });
  const url = h('input', { name: 'webhookUrl', type: 'url', placeholder: 'https://backend.example/palaver', spellcheck: 'false' });
  const warning = h('p', { class: 'hint warn', 'aria-live': 'polite' });
  const allowed = ctx.me.server.privateWebhookAddresses;
  url.addEventListener('input', () => (warning.textContent = privateAddressWarning(url.value, allowed)));
  const button = h('button', { type: 'submit' }, 'Create Service');
  const status = statusLine();
  const form = h(
    'form',
    { 'aria-labelledby': 'new-service' },
    h('h3', { id: 'new-service' }, 'New Service'),
    field('Service name', name),
    field('Webhook URL', url),
    warning,
    button,
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(button, status, async () => {
      const created = (
        await api.post<Service & { apiKey: string; signingSecret: string }>(`/accounts/${account.id}/services`, {
          name: name.value,
          webhookUrl: url.value.trim() === '' ? null : url.value.trim(),
        })
      ).data;
      // The list and the default Service selector include it now; its secrets stay on top.
      await render(
        ctx,
        account.id,
        h(
          'div',
          { class: 'created' },
          h('p', { role: 'status', class: 'status ok' }, `Service ${created.name} created.`),
          secretBox('API key', created.apiKey),
          secretBox('Signing secret', created.signingSecret, 'Shown once: your receiver verifies webhook signatures with it.'),
          h('p', {}, h('a', { href: `#/accounts/${account.id}/services/${created.id}` }, `Open ${created.name}`)),
        ),
      );
    });
  });
  section.append(form);
  return section;
}

/**
 * The secret the customer's backend signs signed-in users' headers with. Shown only when the
 * account is made and here when rotated (whoever holds it can sign in as any customer): a new
 * one is made, and the old one still verifies headers for a grace period.
 */
function authorizationSecretSection(ctx: PageContext, account: AccountOverview): HTMLElement {
  return secretRotationSection({
    title: 'Authorization secret',
    hint: "Your backend signs signed-in customers' headers with it. It was shown when the account was made; rotate it if it was lost or may have leaked.",
    consequence:
      "A new secret signs your signed-in customers' headers from now on; headers signed with the old one are accepted for a grace period.",
    path: `/accounts/${account.id}/authorization-secret`,
    field: 'authorizationSecret',
    note: (until) => `Shown once. Headers signed with the old secret are accepted${until}: give your backend the new one before then.`,
    // Whoever holds it can sign in as any customer and read their conversation.
    refused: sendContentRefusal(ctx.me.grants, 'accounts:edit', account.id, 'Rotating it'),
  });
}
