// An account's business hours (docs/widget.md, docs/service-api.md): a time zone, a weekly
// schedule of intervals per weekday, closed days, and when the team is open at a given moment
// and when it opens next. Kept in the account's settings document; read by the widget (Client
// API GET /chat-settings) and by Services (GET /account/hours). Times are wall-clock times in
// the account's zone, so a schedule stays right across daylight-saving changes.
import { z } from 'zod';

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface Interval {
  /** `HH:MM`, inclusive. */
  from: string;
  /** `HH:MM`, exclusive; `24:00` is the end of the day. */
  to: string;
}

export interface BusinessHours {
  /** An IANA time zone (`Europe/Amsterdam`). */
  timeZone: string;
  /** Per weekday its open intervals, in order; a weekday left out is closed. */
  weekly: Partial<Record<Weekday, Interval[]>>;
  /** Dates (`YYYY-MM-DD`, in the account's zone) closed whatever the weekly schedule says. */
  closedDays: string[];
}

export interface HoursState {
  open: boolean;
  /** When the current interval ends (open), or null. */
  closesAt: Date | null;
  /** When the team opens next (closed), or null when no interval comes within a year. */
  nextOpenAt: Date | null;
}

const minutes = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

/** The zone's canonical IANA name (`europe/amsterdam` → `Europe/Amsterdam`), or null when there is no such zone. */
export function canonicalTimeZone(zone: string): string | null {
  try {
    return new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

const time = z.string().regex(/^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'must be a time HH:MM (00:00 to 24:00)');
const interval = z.object({ from: time, to: time }).strict();

const intervals = z
  .array(interval)
  .max(12)
  .superRefine((list, ctx) => {
    list.forEach((item, i) => {
      if (minutes(item.from) >= minutes(item.to))
        ctx.addIssue({ code: 'custom', path: [i, 'to'], message: 'must be later than from (split an interval across midnight in two)' });
      const before = list[i - 1];
      if (before && minutes(item.from) < minutes(before.to))
        ctx.addIssue({
          code: 'custom',
          path: [i, 'from'],
          message: 'must not be before the end of the interval before it (in order, not overlapping)',
        });
    });
  });

const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine((value) => {
    const date = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
  }, 'must be a date that exists');

export const businessHoursInput = z
  .object({
    timeZone: z
      .string()
      .min(1)
      .max(64)
      .refine((zone) => canonicalTimeZone(zone) !== null, 'must be an IANA time zone such as Europe/Amsterdam')
      .transform((zone) => canonicalTimeZone(zone) ?? zone),
    weekly: z
      .object(Object.fromEntries(WEEKDAYS.map((day) => [day, intervals.optional()])) as Record<Weekday, z.ZodOptional<typeof intervals>>)
      .strict(),
    closedDays: z
      .array(isoDate)
      .max(400)
      .default([])
      .transform((days) => [...new Set(days)].sort()),
  })
  .strict();

/** Minutes the widget shows as the usual reply time ("usually replies within 10 minutes"). */
export const replyTimeInput = z
  .number()
  .int()
  .min(1)
  .max(7 * 24 * 60);

interface LocalTime {
  date: string;
  weekday: Weekday;
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let found = formatters.get(zone);
  if (!found) {
    found = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, found);
  }
  return found;
}

function parts(zone: string, at: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(at)) if (part.type !== 'literal') out[part.type] = Number(part.value);
  return out;
}

/** The zone's offset from UTC at an instant, in milliseconds. */
function offset(zone: string, at: number): number {
  const p = parts(zone, at);
  const wall = Date.UTC(p.year ?? 1970, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0, p.second ?? 0);
  return wall - Math.floor(at / 1000) * 1000;
}

/** The instant a wall-clock time of a date has in the zone (the later one in a gap, the earlier in an overlap). */
function instantOf(zone: string, date: string, minute: number): Date {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d, 0, minute);
  let at = wall - offset(zone, wall);
  at = wall - offset(zone, at);
  return new Date(at);
}

function localTime(zone: string, at: number): LocalTime {
  const p = parts(zone, at);
  const date = `${String(p.year).padStart(4, '0')}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
  const weekday = WEEKDAYS[(new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7] as Weekday;
  return { date, weekday, minute: (p.hour ?? 0) * 60 + (p.minute ?? 0) };
}

function nextDate(date: string): string {
  const next = new Date(`${date}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return next.toISOString().slice(0, 10);
}

function weekdayOf(date: string): Weekday {
  return WEEKDAYS[(new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7] as Weekday;
}

/** Whether the team is open at `now`, and when that changes. No hours: always open. */
export function hoursAt(hours: BusinessHours | null | undefined, now: Date): HoursState {
  if (!hours) return { open: true, closesAt: null, nextOpenAt: null };
  const closed = new Set(hours.closedDays);
  const here = localTime(hours.timeZone, now.getTime());
  const today = closed.has(here.date) ? [] : (hours.weekly[here.weekday] ?? []);
  const current = today.find((i) => minutes(i.from) <= here.minute && here.minute < minutes(i.to));
  if (current) return { open: true, closesAt: instantOf(hours.timeZone, here.date, minutes(current.to)), nextOpenAt: null };
  // A year and a week of dates is enough to get past every closed day a schedule may list.
  let date = here.date;
  for (let day = 0; day < 373; day++, date = nextDate(date)) {
    if (closed.has(date)) continue;
    for (const i of hours.weekly[weekdayOf(date)] ?? []) {
      if (day === 0 && minutes(i.from) <= here.minute) continue;
      return { open: false, closesAt: null, nextOpenAt: instantOf(hours.timeZone, date, minutes(i.from)) };
    }
  }
  return { open: false, closesAt: null, nextOpenAt: null };
}
