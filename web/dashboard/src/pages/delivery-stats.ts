// A Service's delivery numbers: pending, dead and delivered, and a bar chart of the last hour
// (delivered and failed per minute) drawn as inline SVG, with a visually hidden table saying the
// same for screen readers.
import { api } from '../api.ts';
import { h, show } from '../dom.ts';
import type { DeliveryStats } from '../types.ts';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 600;
const HEIGHT = 90;
const BAR = WIDTH / 60;

function svg(tag: string, attributes: Record<string, string | number>): SVGElement {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}

function clock(iso: string): string {
  return new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

/** Stacked bars, delivered below failed, scaled to the busiest minute. */
function chart(stats: DeliveryStats): SVGElement {
  const delivered = stats.lastHour.reduce((sum, m) => sum + m.delivered, 0);
  const failed = stats.lastHour.reduce((sum, m) => sum + m.failed, 0);
  const busiest = Math.max(0, ...stats.lastHour.map((m) => m.delivered + m.failed));
  const top = Math.max(1, busiest);
  const root = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    class: 'chart',
    role: 'img',
    'aria-label': `Last hour: ${delivered} attempts delivered, ${failed} failed; busiest minute ${busiest}.`,
    preserveAspectRatio: 'none',
  });
  root.append(svg('line', { x1: 0, x2: WIDTH, y1: HEIGHT - 0.5, y2: HEIGHT - 0.5, class: 'axis' }));
  for (const [n, m] of stats.lastHour.entries()) {
    const okHeight = (m.delivered / top) * (HEIGHT - 4);
    const failHeight = (m.failed / top) * (HEIGHT - 4);
    const x = n * BAR + 1;
    if (m.delivered > 0) root.append(svg('rect', { x, width: BAR - 2, y: HEIGHT - okHeight, height: okHeight, class: 'ok' }));
    if (m.failed > 0)
      root.append(svg('rect', { x, width: BAR - 2, y: HEIGHT - okHeight - failHeight, height: failHeight, class: 'failed' }));
  }
  return root;
}

/** The minutes with anything in them, as a table for screen readers. */
function table(stats: DeliveryStats): HTMLElement {
  const busy = stats.lastHour.filter((m) => m.delivered > 0 || m.failed > 0);
  if (busy.length === 0) return h('p', { class: 'visually-hidden' }, 'No attempt in the last hour.');
  return h(
    'table',
    { class: 'visually-hidden' },
    h('caption', {}, 'Attempts per minute, last hour'),
    h(
      'thead',
      {},
      h('tr', {}, h('th', { scope: 'col' }, 'Minute'), h('th', { scope: 'col' }, 'Delivered'), h('th', { scope: 'col' }, 'Failed')),
    ),
    h(
      'tbody',
      {},
      ...busy.map((m) =>
        h('tr', {}, h('th', { scope: 'row' }, clock(m.minute)), h('td', {}, String(m.delivered)), h('td', {}, String(m.failed))),
      ),
    ),
  );
}

/** The section and a function that reads the numbers again. */
export function deliveryStatsPanel(serviceId: number): { element: HTMLElement; reload: () => Promise<void> } {
  const element = h('div', { class: 'delivery-stats', role: 'group', 'aria-label': 'Delivery numbers' });
  const reload = async () => {
    const stats = (await api.get<DeliveryStats>(`/services/${serviceId}/delivery-stats`)).data;
    const first = stats.lastHour[0];
    const last = stats.lastHour[stats.lastHour.length - 1];
    show(
      element,
      h(
        'dl',
        { class: 'numbers' },
        h('div', {}, h('dt', {}, 'Pending'), h('dd', { 'data-count': 'pending' }, String(stats.pending))),
        h('div', {}, h('dt', {}, 'Dead'), h('dd', { 'data-count': 'dead', class: stats.dead > 0 ? 'bad' : '' }, String(stats.dead))),
        h('div', {}, h('dt', {}, 'Delivered'), h('dd', { 'data-count': 'delivered' }, String(stats.delivered))),
      ),
      h(
        'figure',
        { class: 'chart-figure' },
        chart(stats),
        h(
          'figcaption',
          { class: 'hint' },
          h('span', { class: 'key ok' }),
          ' delivered ',
          h('span', { class: 'key failed' }),
          ' failed attempts, per minute',
          first && last ? `, ${clock(first.minute)}–${clock(last.minute)}` : '',
        ),
      ),
      table(stats),
    );
  };
  return { element, reload };
}
