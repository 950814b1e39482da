import { hoursAt } from '../tenancy/business-hours.ts';
import type { ChatSettings } from '../tenancy/chat-settings.ts';

/** The hours as a Service or the widget reads them: the schedule and its state at `now`. */
export function presentHours(settings: ChatSettings, now: Date) {
  const state = hoursAt(settings.businessHours, now);
  return {
    /** null: no business hours set, the team counts as always open. */
    schedule: settings.businessHours,
    replyTimeMinutes: settings.replyTimeMinutes,
    at: now.toISOString(),
    open: state.open,
    closesAt: state.closesAt?.toISOString() ?? null,
    nextOpenAt: state.nextOpenAt?.toISOString() ?? null,
  };
}

/** What the widget reads (Client API GET /chat-settings): the form, and the hours' state now without the schedule. */
export function presentWidgetSettings(settings: ChatSettings, now: Date) {
  const { open, closesAt, nextOpenAt } = presentHours(settings, now);
  return {
    prechatForm: settings.prechatForm,
    replyTimeMinutes: settings.replyTimeMinutes,
    hours: settings.businessHours ? { open, closesAt, nextOpenAt, timeZone: settings.businessHours.timeZone } : null,
  };
}
