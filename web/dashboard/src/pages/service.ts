import { api } from '../api.ts';
import { field, formatTime, h, show } from '../dom.ts';
import type { PageContext } from '../page.ts';
import { can, sendContentRefusal } from '../permissions.ts';
import type { AccountOverview, ApiKey, Service, TestEventResult } from '../types.ts';
import { badge, busy, confirm, say, secretBox, statusLine } from '../ui.ts';
import { deliveriesSection } from './deliveries.ts';
import { secretRotationSection } from './secret-rotation.ts';
import { privateAddressWarning } from './webhook-url.ts';

export async function servicePage(ctx: PageContext, accountId: number, serviceId: number): Promise<void> {
  const account = (await api.get<AccountOverview>(`/accounts/${accountId}`)).data;
  const service = account.services.find((s) => s.id === serviceId);
  if (!service) {
    show(ctx.main, h('h1', {}, 'Service not found'), h('p', {}, h('a', { href: `#/accounts/${accountId}` }, `Back to ${account.name}`)));
    return;
  }
  const editable = can(ctx.me.grants, 'services:edit', accountId);
  // A webhook URL, a test event and an API key send conversation content elsewhere (or read it).
  const refused = (what: string) => sendContentRefusal(ctx.me.grants, 'services:edit', accountId, what);
  const mayReadLog = can(ctx.me.grants, 'deliveries:read', accountId) && can(ctx.me.grants, 'conversations:read', accountId);
  show(
    ctx.main,
    h(
      'p',
      { class: 'crumbs' },
      h('a', { href: '#/accounts' }, 'Accounts'),
      ' / ',
      h('a', { href: `#/accounts/${accountId}` }, account.name),
      ' / ',
      service.name,
    ),
    h('h1', {}, service.name, ' ', service.isDefault ? badge('default', 'ok') : null),
    h('p', {}, 'Identification: ', h('code', {}, service.identification)),
    editable
      ? h(
          'div',
          { class: 'columns' },
          h(
            'div',
            {},
            settingsSection(service, ctx.me.server.privateWebhookAddresses, refused('Changing the webhook URL')),
            testEventSection(service, refused('Sending a test event')),
          ),
          h('div', {}, await keysSection(service, refused('Adding an API key')), secretSection(service)),
        )
      : readOnlySection(service),
    mayReadLog ? deliveriesSection(ctx, service, can(ctx.me.grants, 'deliveries:manage', accountId)) : null,
  );
}

/** `urlRefused`: why the webhook URL cannot be changed (null: it can); the name and the state still can. */
function settingsSection(service: Service, privateAllowed: boolean, urlRefused: string | null): HTMLElement {
  const name = h('input', { name: 'name', value: service.name, required: true });
  const url = h('input', {
    name: 'webhookUrl',
    type: 'url',
    value: service.webhookUrl ?? '',
    spellcheck: 'false',
    disabled: urlRefused !== null,
  });
  const warning = h('p', { class: 'hint warn', 'aria-live': 'polite' }, privateAddressWarning(url.value, privateAllowed));
  url.addEventListener('input', () => (warning.textContent = privateAddressWarning(url.value, privateAllowed)));
  const save = h('button', { type: 'submit' }, 'Save Service');
  const state = h('p', {});
  const toggle = h('button', { type: 'button', class: 'secondary' });
  const status = statusLine();
  let enabled = service.enabled;
  const showState = (reason: string | null) => {
    show(
      state,
      'State: ',
      enabled ? badge('enabled', 'ok') : badge(reason === 'webhook_gone' ? 'disabled: the endpoint answered 410' : 'disabled', 'warn'),
    );
    toggle.textContent = enabled ? 'Disable Service' : 'Enable Service';
  };
  showState(service.disabledReason);
  toggle.addEventListener(
    'click',
    () =>
      void busy(toggle, status, async () => {
        const updated = (await api.patch<Service>(`/services/${service.id}`, { enabled: !enabled })).data;
        enabled = updated.enabled;
        showState(updated.disabledReason);
        say(status, enabled ? 'Enabled: deliveries go out again.' : 'Disabled: nothing is delivered to it.');
      }),
  );
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'service-settings' },
    h('h2', { id: 'service-settings' }, 'Settings'),
    field('Name', name),
    field('Webhook URL', url, urlRefused ?? undefined),
    warning,
    save,
    state,
    toggle,
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(save, status, async () => {
      const value = url.value.trim();
      const webhookUrl = urlRefused === null ? { webhookUrl: value === '' ? null : value } : {};
      await api.patch(`/services/${service.id}`, { name: name.value, ...webhookUrl });
      say(status, 'Service saved.');
    });
  });
  return form;
}

function testEventSection(service: Service, refused: string | null): HTMLElement {
  const button = h('button', { type: 'button', disabled: refused !== null }, 'Send test event');
  const status = statusLine();
  const result = h('div', { class: 'test-result' });
  button.addEventListener(
    'click',
    () =>
      void busy(button, status, async () => {
        say(status, 'Sending…');
        const answer = (await api.post<TestEventResult>(`/services/${service.id}/test-event`)).data;
        say(
          status,
          answer.ok
            ? `Delivered: the receiver answered ${answer.status}.`
            : answer.status
              ? `Refused: the receiver answered ${answer.status}.`
              : `Not delivered: ${answer.error ?? 'no answer'}.`,
          answer.ok ? 'ok' : 'error',
        );
        show(
          result,
          h(
            'dl',
            {},
            h('dt', {}, 'webhook-id'),
            h('dd', {}, h('code', {}, answer.webhookId)),
            h('dt', {}, 'Status'),
            h('dd', {}, answer.status === null ? 'no answer' : String(answer.status)),
            h('dt', {}, 'Duration'),
            h('dd', {}, `${answer.durationMs} ms`),
            h('dt', {}, 'Signatures'),
            h('dd', {}, answer.signatures === 2 ? 'two (current and previous secret)' : 'one'),
            answer.error ? h('dt', {}, 'Error') : null,
            answer.error ? h('dd', {}, answer.error) : null,
            h('dt', {}, 'Answer'),
            h('dd', {}, h('pre', {}, answer.body ?? '')),
          ),
        );
      }),
  );
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'test-title' },
    h('h2', { id: 'test-title' }, 'Test event'),
    h(
      'p',
      { class: 'hint' },
      'Sends a signed test payload to the webhook URL now (not through the deliveries queue) and shows the answer.',
    ),
    button,
    refused === null ? null : h('p', { class: 'hint' }, refused),
    status,
    result,
  );
}

async function keysSection(service: Service, addRefused: string | null): Promise<HTMLElement> {
  const list = h('ul', { class: 'plain' });
  const status = statusLine();
  const created = h('div', {});
  const render = async () => {
    const keys = (await api.get<ApiKey[]>(`/services/${service.id}/keys`)).data;
    show(
      list,
      ...keys.map((key) => {
        const revoke = h('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke key ${key.prefix ?? key.id}` }, 'Revoke');
        revoke.addEventListener(
          'click',
          () =>
            void (async () => {
              if (
                !(await confirm('Revoke API key', `Calls with the key ${key.prefix ?? key.id}… will be refused from now on.`, 'Revoke key'))
              )
                return;
              await busy(revoke, status, async () => {
                await api.delete(`/services/${service.id}/keys/${key.id}`);
                say(status, 'Key revoked.');
                await render();
              });
            })(),
        );
        return h(
          'li',
          { class: 'key-row' },
          h('code', {}, `${key.prefix ?? key.id}…`),
          ' ',
          h('span', { class: 'hint' }, `created ${formatTime(key.createdAt)}`),
          ' ',
          key.revokedAt ? badge('revoked', 'muted') : revoke,
        );
      }),
    );
  };
  await render();
  const add = h('button', { type: 'button', class: 'secondary', disabled: addRefused !== null }, 'Add API key');
  add.addEventListener(
    'click',
    () =>
      void busy(add, status, async () => {
        const answer = (await api.post<ApiKey & { apiKey: string }>(`/services/${service.id}/keys`)).data;
        show(created, secretBox('New API key', answer.apiKey));
        say(status, 'Key added.');
        await render();
      }),
  );
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'keys-title' },
    h('h2', { id: 'keys-title' }, 'API keys'),
    list,
    add,
    addRefused === null ? null : h('p', { class: 'hint' }, addRefused),
    status,
    created,
  );
}

function secretSection(service: Service): HTMLElement {
  return secretRotationSection({
    title: 'Signing secret',
    hint: 'Receivers verify the webhook-signature header with it.',
    consequence: 'A new secret signs deliveries from now on; the old one signs them too for a grace period.',
    path: `/services/${service.id}/signing-secret`,
    field: 'signingSecret',
    note: (until) =>
      `Shown once. Both signatures (new and old secret) are sent with every delivery during the grace period${until}: update your receiver before it ends.`,
    refused: null,
  });
}

/** What an operator without services:edit may still know: where the webhooks go, and whether they go. */
function readOnlySection(service: Service): HTMLElement {
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'service-title' },
    h('h2', { id: 'service-title' }, 'Settings'),
    h('p', {}, 'Webhook URL: ', service.webhookUrl ? h('code', {}, service.webhookUrl) : 'none'),
    h(
      'p',
      {},
      'State: ',
      service.enabled ? badge('enabled', 'ok') : badge('disabled', 'warn'),
      service.disabledReason ? ` (${service.disabledReason})` : '',
    ),
    h('p', { class: 'hint' }, 'Changing this Service, its API keys and its signing secret needs the services:edit permission.'),
  );
}
