// The account page's "Chat widget: form and hours" card (docs/dashboard.md): the pre-chat form,
// the usual reply time and the business hours (a time zone, intervals per weekday, closed days),
// saved through PATCH /adminApi/accounts/{id}; Palaver's 422 names the fields, shown on them.
import { ApiError, api } from '../api.ts';
import { field, h } from '../dom.ts';
import type { PageContext } from '../page.ts';
import { can } from '../permissions.ts';
import type { AccountOverview } from '../types.ts';
import { busy, say, statusLine } from '../ui.ts';

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
type Weekday = (typeof WEEKDAYS)[number];

interface Interval {
  from: string;
  to: string;
}

interface ChatSettingsFields {
  prechatForm: { fields: 'none' | 'email' | 'name_email'; timing: 'before' | 'after' };
  businessHours: { timeZone: string; weekly: Partial<Record<Weekday, Interval[]>>; closedDays: string[] } | null;
  replyTimeMinutes: number | null;
}

const label = (day: Weekday) => day[0]?.toUpperCase() + day.slice(1);

/** "09:00-12:30, 13:30-17:00" → intervals; what does not read as one is sent as written, for Palaver to name. */
function parseIntervals(text: string): Interval[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const [from = '', to = ''] = part.split(/\s*[-–]\s*/);
      return { from: from.padStart(5, '0'), to: to.padStart(5, '0') };
    });
}

/** The browser's list of zones, where it has one (the lib of this build predates Intl.supportedValuesOf). */
function zoneNames(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
  return intl.supportedValuesOf?.('timeZone') ?? [];
}

const formatIntervals = (list: Interval[] | undefined) => (list ?? []).map((i) => `${i.from}-${i.to}`).join(', ');

export function chatSettingsSection(ctx: PageContext, account: AccountOverview): HTMLElement {
  const current = account as AccountOverview & Partial<ChatSettingsFields>;
  const editable = can(ctx.me.grants, 'accounts:edit', account.id);
  const prechat = current.prechatForm ?? { fields: 'none', timing: 'after' };
  const hours = current.businessHours ?? null;

  const fields = h(
    'select',
    { name: 'prechatFields', disabled: !editable },
    h('option', { value: 'none' }, 'No form'),
    h('option', { value: 'email' }, 'Email'),
    h('option', { value: 'name_email' }, 'Name and email'),
  );
  fields.value = prechat.fields;
  const timing = h(
    'select',
    { name: 'prechatTiming', disabled: !editable },
    h('option', { value: 'before' }, 'Before the first message (required)'),
    h('option', { value: 'after' }, 'After the first message (the visitor may skip it)'),
  );
  timing.value = prechat.timing;
  const reply = h('input', { name: 'replyTimeMinutes', type: 'number', min: '1', max: '10080', inputmode: 'numeric', disabled: !editable });
  reply.value = current.replyTimeMinutes ? String(current.replyTimeMinutes) : '';

  const useHours = h('input', { type: 'checkbox', name: 'useHours', checked: hours !== null, disabled: !editable });
  const zone = h('input', {
    name: 'timeZone',
    list: 'time-zones',
    value: hours?.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
    spellcheck: 'false',
    disabled: !editable,
  });
  const zones = h('datalist', { id: 'time-zones' }, ...zoneNames().map((z) => h('option', { value: z })));
  const days = new Map<Weekday, HTMLInputElement>(
    WEEKDAYS.map((day) => [
      day,
      h('input', {
        name: day,
        value: formatIntervals(hours?.weekly[day]),
        placeholder: 'closed',
        spellcheck: 'false',
        disabled: !editable,
      }),
    ]),
  );
  const closed = h('textarea', { name: 'closedDays', rows: 3, spellcheck: 'false', disabled: !editable });
  closed.value = (hours?.closedDays ?? []).join('\n');
  const hoursFields = h(
    'fieldset',
    { class: 'hours' },
    h('legend', {}, 'Business hours'),
    field('Time zone', zone, 'An IANA time zone, such as Europe/Amsterdam.'),
    zones,
    ...WEEKDAYS.map((day) => field(label(day), days.get(day) as HTMLInputElement)),
    h('p', { class: 'hint' }, 'Per weekday its open hours, such as 09:00-12:30, 13:30-17:00; empty: closed that day.'),
    field('Closed days', closed, 'One date per line (YYYY-MM-DD), such as public holidays.'),
  );
  const drawHours = () => (hoursFields.hidden = !useHours.checked);
  useHours.addEventListener('change', drawHours);
  drawHours();

  const errors = h('ul', { class: 'status error', role: 'alert', hidden: true });
  const button = h('button', { type: 'submit', disabled: !editable }, 'Save form and hours');
  const status = statusLine();
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'chat-settings-title', novalidate: true },
    h('h2', { id: 'chat-settings-title' }, 'Chat widget: form and hours'),
    field('Pre-chat form', fields, 'Contact details the widget asks for, so answers can reach a visitor who left (by email).'),
    field('Asked', timing),
    field('Usual reply time (minutes)', reply, 'Shown in the widget’s header: "Usually replies within 10 minutes". Empty: not shown.'),
    h(
      'div',
      { class: 'field check' },
      h('label', {}, useHours, ' Set business hours'),
      h('p', { class: 'hint' }, 'Outside them the widget says when the team is back, and that the answer comes by email.'),
    ),
    hoursFields,
    errors,
    button,
    editable ? null : h('p', { class: 'hint' }, 'You need the accounts:edit permission to change these.'),
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    errors.hidden = true;
    void busy(button, status, async () => {
      const weekly: Partial<Record<Weekday, Interval[]>> = {};
      for (const [day, input] of days) {
        const list = parseIntervals(input.value);
        if (list.length > 0) weekly[day] = list;
      }
      const body: ChatSettingsFields = {
        prechatForm: { fields: fields.value as ChatSettingsFields['prechatForm']['fields'], timing: timing.value as 'before' | 'after' },
        replyTimeMinutes: reply.value.trim() === '' ? null : Number(reply.value),
        businessHours: useHours.checked
          ? { timeZone: zone.value.trim(), weekly, closedDays: closed.value.split(/\s+/).filter((d) => d !== '') }
          : null,
      };
      try {
        await api.patch(`/accounts/${account.id}`, body);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 422) throw err;
        // Each problem named by its place: "businessHours.weekly.monday.1.from: must not be before…".
        errors.replaceChildren(
          ...err.notifications.map((n) => h('li', {}, `${(n.field ?? '').replace(/^body\./, '')}: ${n.detail ?? n.message}`)),
        );
        errors.hidden = false;
        say(status, 'Not saved: see the problems above.', 'error');
        return;
      }
      say(status, 'Form and hours saved.');
    });
  });
  return form;
}
