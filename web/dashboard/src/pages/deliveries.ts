import { api } from '../api.ts';
import { field, formatTime, h, show } from '../dom.ts';
import { onConversation, onDeliveries } from '../live.ts';
import type { PageContext } from '../page.ts';
import type { Delivery, DeliveryAttempt, Service } from '../types.ts';
import { badge, busy, errorText, say, statusLine } from '../ui.ts';
import { deliveryStatsPanel } from './delivery-stats.ts';

const STATE_BADGE = { pending: 'warn', delivered: 'ok', dead: 'error' } as const;

/** A datetime-local value (the browser's time zone) as the API's ISO time; '' when empty. */
function isoOf(local: string): string {
  return local ? new Date(local).toISOString() : '';
}

const OUTCOME_TEXT = {
  delivered: 'delivered',
  retry: 'to be retried',
  dead: 'gave up',
  gone: '410: Service switched off',
  unregistered: 'token refused',
} as const;

/** Runs `task` now, or once more after the run under way: live events can come faster than a reload. */
function coalesced(task: () => Promise<void>, onError: (err: unknown) => void): () => void {
  let running = false;
  let again = false;
  const run = () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void task()
      .catch(onError)
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          run();
        }
      });
  };
  return run;
}

/** A delivery's attempts as a table, read when first opened. */
function attemptsDetails(d: Delivery): HTMLDetailsElement {
  const body = h('div', {}, h('p', { class: 'hint' }, 'Loading…'));
  const details = h('details', {}, h('summary', {}, 'Attempts'), body);
  let loaded = false;
  details.addEventListener('toggle', () => {
    if (!details.open || loaded) return;
    loaded = true;
    api.get<DeliveryAttempt[]>(`/deliveries/${d.id}/attempts`).then(
      ({ data }) => show(body, data.length === 0 ? h('p', { class: 'hint' }, 'No attempt recorded yet.') : attemptsTable(data)),
      (err: unknown) => {
        loaded = false;
        show(body, h('p', { class: 'status error' }, errorText(err)));
      },
    );
  });
  return details;
}

function attemptsTable(attempts: DeliveryAttempt[]): HTMLDivElement {
  const header = ['#', 'Started', 'Took', 'Status', 'Outcome', 'Error'];
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'attempts' },
      h('caption', { class: 'visually-hidden' }, 'Attempts, oldest first'),
      h('thead', {}, h('tr', {}, ...header.map((text) => h('th', { scope: 'col' }, text)))),
      h(
        'tbody',
        {},
        ...attempts.map((a) =>
          h(
            'tr',
            {},
            h('td', {}, String(a.attempt)),
            h('td', {}, formatTime(a.startedAt)),
            h('td', {}, `${a.durationMs} ms`),
            h('td', {}, a.status === null ? '—' : String(a.status)),
            h(
              'td',
              {},
              OUTCOME_TEXT[a.outcome],
              a.nextAttemptAt ? h('span', { class: 'hint' }, ` (next ${formatTime(a.nextAttemptAt)})`) : null,
            ),
            h('td', { class: 'error-text' }, a.error ?? ''),
          ),
        ),
      ),
    ),
  );
}

/**
 * The deliveries of a Service: the numbers and the last hour (read again when the Service's
 * delivery outcomes are committed, on every live notice of the account, and with the log), and
 * the log filtered by state, time and user, each with its attempts and payload; redeliver the dead.
 */
export function deliveriesSection(ctx: PageContext, service: Service, mayManage: boolean): HTMLElement {
  const since = h('input', { type: 'datetime-local', name: 'since' });
  const until = h('input', { type: 'datetime-local', name: 'until' });
  const userId = h('input', { type: 'number', name: 'userId', min: 1, inputmode: 'numeric' });
  const stats = deliveryStatsPanel(service.id);
  const state = h(
    'select',
    { name: 'state' },
    h('option', { value: '' }, 'All'),
    h('option', { value: 'pending' }, 'Pending'),
    h('option', { value: 'delivered' }, 'Delivered'),
    h('option', { value: 'dead' }, 'Dead'),
  );
  const refresh = h('button', { type: 'button', class: 'secondary' }, 'Refresh');
  // After the Service's outage: its conversations need not wait out the retry schedule.
  const retryNow = mayManage ? h('button', { type: 'button', class: 'secondary' }, 'Retry waiting now') : null;
  const status = statusLine();
  const list = h('div', {});
  // Renders overlap (the first one, a filter changed, a live reload of the numbers it waits
  // for): only the latest may fill the list, or a slower earlier one shows a stale log over it.
  let latest = 0;
  const render = async () => {
    const mine = ++latest;
    const query = new URLSearchParams();
    if (state.value) query.set('state', state.value);
    if (since.value) query.set('since', isoOf(since.value));
    if (until.value) query.set('until', isoOf(until.value));
    if (userId.value) query.set('userId', userId.value);
    const [log] = await Promise.all([api.get<Delivery[]>(`/services/${service.id}/deliveries?${query.toString()}`), stats.reload()]);
    if (mine !== latest) return;
    const rows = log.data;
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
    const kind = d.payload as { body?: { action?: string; name?: string }; type?: string } | null;
    const name = kind?.body?.action ?? (kind?.type === 'event' && kind.body?.name ? `event: ${kind.body.name}` : (kind?.type ?? d.kind));
    return h(
      'li',
      { class: 'delivery' },
      h(
        'div',
        { class: 'row' },
        badge(d.state, STATE_BADGE[d.state]),
        h('strong', {}, name),
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
        d.waitsForEarlier ? ' · waits for an earlier delivery of its conversation' : '',
        d.deliveredAt ? ` · delivered ${formatTime(d.deliveredAt)}` : '',
      ),
      attemptsDetails(d),
      h('details', {}, h('summary', {}, 'Payload'), h('pre', {}, JSON.stringify(d.payload, null, 2))),
    );
  };
  for (const filter of [state, since, until, userId]) {
    filter.addEventListener('change', () => void render().catch((err: unknown) => say(status, errorText(err), 'error')));
  }
  // A message notice means new pending deliveries; a deliveries event, outcomes committed
  // (docs/dashboard.md, "Live counts").
  const reloadStats = coalesced(stats.reload, (err) => say(status, errorText(err), 'error'));
  ctx.onLeave(
    onConversation((change) => {
      if (change.accountId === service.accountId) reloadStats();
    }),
  );
  ctx.onLeave(
    onDeliveries((change) => {
      if (change.serviceIds.includes(service.id)) reloadStats();
    }),
  );
  refresh.addEventListener('click', () => void busy(refresh, status, render));
  retryNow?.addEventListener(
    'click',
    () =>
      void busy(retryNow, status, async () => {
        const { retried } = (await api.post<{ retried: number }>(`/services/${service.id}/deliveries/retry`)).data;
        say(
          status,
          retried === 0 ? 'No delivery was waiting for a retry.' : `Retrying ${retried} ${retried === 1 ? 'delivery' : 'deliveries'} now.`,
        );
        await render();
      }),
  );
  void render().catch((err: unknown) => say(status, errorText(err), 'error'));
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'deliveries-title' },
    h('h2', { id: 'deliveries-title' }, 'Deliveries'),
    stats.element,
    h(
      'div',
      { class: 'row filters' },
      field('State', state),
      field('Since', since),
      field('Until', until),
      field('User id', userId),
      refresh,
      retryNow,
    ),
    status,
    list,
  );
}
