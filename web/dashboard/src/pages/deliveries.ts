import { api } from '../api.ts';
import { field, formatTime, h, show } from '../dom.ts';
import type { PageContext } from '../main.ts';
import type { Delivery, Service } from '../types.ts';
import { badge, busy, say, statusLine } from '../ui.ts';

const STATE_BADGE = { pending: 'warn', delivered: 'ok', dead: 'error' } as const;

/** The deliveries log of a Service: filter by state, each with its payload, redeliver the dead. */
export function deliveriesSection(_ctx: PageContext, service: Service, mayManage: boolean): HTMLElement {
  const state = h(
    'select',
    { name: 'state' },
    h('option', { value: '' }, 'All'),
    h('option', { value: 'pending' }, 'Pending'),
    h('option', { value: 'delivered' }, 'Delivered'),
    h('option', { value: 'dead' }, 'Dead'),
  );
  const refresh = h('button', { type: 'button', class: 'secondary' }, 'Refresh');
  const status = statusLine();
  const list = h('div', {});
  const render = async () => {
    const query = state.value ? `?state=${state.value}` : '';
    const rows = (await api.get<Delivery[]>(`/services/${service.id}/deliveries${query}`)).data;
    show(
      list,
      rows.length === 0
        ? h('p', { class: 'empty' }, 'No deliveries.')
        : h('ul', { class: 'plain deliveries' }, ...rows.map((d) => item(d))),
    );
  };
  const item = (d: Delivery) => {
    const action = d.state === 'dead' && mayManage ? h('button', { type: 'button', class: 'small' }, 'Redeliver') : null;
    action?.addEventListener(
      'click',
      () =>
        void busy(action, status, async () => {
          await api.post(`/deliveries/${d.id}/redeliver`);
          say(status, 'Sent again.');
          await render();
        }),
    );
    const kind = d.payload as { body?: { action?: string }; type?: string } | null;
    return h(
      'li',
      { class: 'delivery' },
      h(
        'div',
        { class: 'row' },
        badge(d.state, STATE_BADGE[d.state]),
        h('strong', {}, kind?.body?.action ?? kind?.type ?? d.kind),
        h('span', { class: 'hint' }, formatTime(d.createdAt)),
        action,
      ),
      h(
        'div',
        { class: 'hint' },
        `webhook-id ${d.id} · ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`,
        d.lastStatus ? ` · last status ${d.lastStatus}` : '',
        d.lastError ? ` · ${d.lastError}` : '',
        d.nextAttemptAt ? ` · next attempt ${formatTime(d.nextAttemptAt)}` : '',
        d.deliveredAt ? ` · delivered ${formatTime(d.deliveredAt)}` : '',
      ),
      h('details', {}, h('summary', {}, 'Payload'), h('pre', {}, JSON.stringify(d.payload, null, 2))),
    );
  };
  state.addEventListener('change', () => void render().catch((err: unknown) => say(status, String(err), 'error')));
  refresh.addEventListener('click', () => void busy(refresh, status, render));
  void render().catch((err: unknown) => say(status, String(err), 'error'));
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'deliveries-title' },
    h('h2', { id: 'deliveries-title' }, 'Deliveries'),
    h('div', { class: 'row' }, field('State', state), refresh),
    status,
    list,
  );
}
