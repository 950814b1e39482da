// The business hours as a visitor reads them (docs/widget.md): when the team is back, in the
// visitor's own clock and language ("We're back Monday at 09:00"), and the usual reply time.
// Palaver computes the hours in the account's zone (GET /chat-settings); this only words them.
import type { ReachStrings } from './reach-strings.ts';

const DAY = 24 * 60 * 60 * 1000;

function dayNumber(date: Date): number {
  return Math.floor((date.getTime() - date.getTimezoneOffset() * 60_000) / DAY);
}

/** "today at 09:00", "tomorrow at 09:00", "Monday at 09:00", "on 28 December at 09:00" (the visitor's zone). */
export function backAt(nextOpenAt: string, locale: string, s: ReachStrings, now = new Date()): string {
  const at = new Date(nextOpenAt);
  const time = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
  const days = dayNumber(at) - dayNumber(now);
  if (days <= 0) return s.backToday(time);
  if (days === 1) return s.backTomorrow(time);
  if (days < 7) return s.backOn(new Intl.DateTimeFormat(locale, { weekday: 'long' }).format(at), time);
  return s.backOnDate(new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'long' }).format(at), time);
}

/** The header's line: "Usually replies within 10 minutes". */
export function replyTime(minutes: number, s: ReachStrings): string {
  if (minutes < 60) return s.repliesInMinutes(minutes);
  if (minutes < 24 * 60) return s.repliesInHours(Math.round(minutes / 60));
  return s.repliesInDays(Math.round(minutes / (24 * 60)));
}

/** How long until the hours' state changes (re-read then), capped so a long wait still refreshes. */
export function untilChange(hours: { closesAt: string | null; nextOpenAt: string | null }, now = Date.now()): number | null {
  const next = hours.closesAt ?? hours.nextOpenAt;
  if (!next) return null;
  return Math.min(Math.max(new Date(next).getTime() - now + 1000, 1000), 6 * 60 * 60 * 1000);
}
