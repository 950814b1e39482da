// The audit log (docs/security.md, docs/dashboard.md): who changed what and who signed in,
// newest first, filtered by account, operator, action and time, a page at a time ("Load more"),
// and the same entries as a JSON-lines file. The server shows only the entries the operator's
// audit:read allows (an account's, or everything).
import { api, download } from '../api.ts';
import { field, formatTime, h, show } from '../dom.ts';
import type { PageContext } from '../page.ts';
import { badge, busy, say, statusLine } from '../ui.ts';

export interface AuditEntry {
  id: string;
  at: string;
  actor: 'operator' | 'cli' | 'anonymous';
  operator: { id: number | null; identifier: string | null; email: string | null } | null;
  sessionId: number | null;
  accountId: number | null;
  action: string;
  target: Record<string, string | number>;
  changed: string[];
  outcome: 'success' | 'failure' | 'refused';
  address: string | null;
  userAgent: string | null;
}

const PAGE = 50;

function who(entry: AuditEntry): string {
  if (entry.actor === 'cli') return 'command line';
  const email = entry.operator?.email ?? 'unknown';
  return entry.actor === 'anonymous' ? `${email} (not signed in)` : email;
}

function what(entry: AuditEntry): HTMLElement {
  // The account is said once, not again as a target.
  const target = Object.entries(entry.target)
    .filter(([k, v]) => !(k === 'accountId' && v === entry.accountId))
    .map(([k, v]) => `${k} ${v}`);
  const account = entry.accountId === null ? [] : [`account ${entry.accountId}`];
  return h(
    'div',
    {},
    h('code', {}, entry.action),
    entry.outcome === 'success' ? null : ' ',
    entry.outcome === 'success' ? null : badge(entry.outcome, entry.outcome === 'failure' ? 'error' : 'warn'),
    h('div', { class: 'hint' }, [...account, ...target].join(', ') || '—'),
    entry.changed.length > 0 ? h('div', { class: 'hint' }, `changed: ${entry.changed.join(', ')}`) : null,
  );
}

function row(entry: AuditEntry): HTMLTableRowElement {
  return h(
    'tr',
    {},
    h('td', {}, h('time', { datetime: entry.at }, formatTime(entry.at))),
    h('td', {}, who(entry)),
    h('td', {}, what(entry)),
    h('td', {}, entry.address ?? '—'),
  );
}

export async function auditPage(ctx: PageContext): Promise<void> {
  const account = h('input', { name: 'accountId', inputmode: 'numeric', pattern: '[0-9]*', autocomplete: 'off' });
  const operator = h('input', { name: 'operatorId', inputmode: 'numeric', pattern: '[0-9]*', autocomplete: 'off' });
  const action = h('input', { name: 'action', autocomplete: 'off', placeholder: 'service or service.update' });
  const from = h('input', { name: 'since', type: 'datetime-local' });
  const to = h('input', { name: 'until', type: 'datetime-local' });
  const apply = h('button', { type: 'submit' }, 'Apply filters');
  const form = h(
    'form',
    { class: 'row filters audit-filters', 'aria-label': 'Filter the audit log' },
    field('Account id', account),
    field('Operator id', operator),
    field('Action', action),
    field('From', from),
    field('To', to),
    apply,
  );
  const status = statusLine();
  const body = h('tbody', {});
  const more = h('button', { type: 'button', class: 'secondary' }, 'Load more');
  const exportButton = h('button', { type: 'button', class: 'secondary' }, 'Export (JSON lines)');
  const empty = h('p', { class: 'hint' }, 'No entries match.');
  const moreSlot = h('div', {});
  const emptySlot = h('div', {});
  let before: string | null = null;

  /** The filters as a query string (without paging); times typed in local time, sent as UTC. */
  const filters = (): URLSearchParams => {
    const query = new URLSearchParams();
    if (account.value.trim()) query.set('accountId', account.value.trim());
    if (operator.value.trim()) query.set('operatorId', operator.value.trim());
    if (action.value.trim()) query.set('action', action.value.trim());
    if (from.value) query.set('since', new Date(from.value).toISOString());
    if (to.value) query.set('until', new Date(to.value).toISOString());
    return query;
  };

  const load = async (append: boolean) => {
    const query = filters();
    query.set('limit', String(PAGE));
    if (append && before) query.set('before', before);
    const answer = await api.get<AuditEntry[]>(`/audit?${query.toString()}`);
    const paging = (answer as unknown as { paging?: { before: string | null } }).paging;
    const rows = answer.data.map(row);
    if (append) body.append(...rows);
    else show(body, ...rows);
    before = paging?.before ?? null;
    // Taken out rather than hidden: the button styles would show a hidden button.
    show(moreSlot, before === null ? null : more);
    show(emptySlot, body.childElementCount > 0 ? null : empty);
    // The first new row takes the focus after "Load more", so a keyboard user reads on from there.
    const first = rows[0]?.firstElementChild;
    if (append && first instanceof HTMLElement) {
      first.tabIndex = -1;
      first.focus();
    }
    say(status, `${body.childElementCount} entr${body.childElementCount === 1 ? 'y' : 'ies'} shown${before ? '; more below' : ''}.`);
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(apply, status, () => load(false));
  });
  more.addEventListener('click', () => void busy(more, status, () => load(true)));
  exportButton.addEventListener(
    'click',
    () =>
      void busy(exportButton, status, async () => {
        const { blob, filename } = await download(`/audit/export?${filters().toString()}`);
        const url = URL.createObjectURL(blob);
        const link = h('a', { href: url, download: filename ?? 'palaver-audit.ndjson' });
        link.click();
        setTimeout(() => URL.revokeObjectURL(url), 60_000);
        say(status, 'Export downloaded.');
      }),
  );

  show(
    ctx.main,
    h('h1', {}, 'Audit log'),
    h(
      'p',
      { class: 'hint' },
      'Every change through the Admin API or the command line, and every sign-in, newest first. Field names only: never their values.',
    ),
    form,
    h(
      'section',
      { class: 'card table-wrap' },
      h(
        'table',
        { class: 'audit' },
        h('caption', { class: 'visually-hidden' }, 'Audit log entries'),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'When'),
            h('th', { scope: 'col' }, 'Who'),
            h('th', { scope: 'col' }, 'Action and target'),
            h('th', { scope: 'col' }, 'Address'),
          ),
        ),
        body,
      ),
      emptySlot,
    ),
    h('div', { class: 'row spread' }, moreSlot, exportButton),
    status,
  );
  await load(false);
}
