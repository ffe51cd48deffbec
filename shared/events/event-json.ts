import { pgTimestampToIsoMicros, pgTimestampToMillis } from '../calendar/dates';
import { formatDateRange } from '../calendar/format';
import { recurrenceText } from '../calendar/recurrence';
import { isoWithOffset, timezoneReadable, wallClock } from '../calendar/time-zones';
import { publicId } from '../ids/ids';
import { eventPublicUrl } from '../links/public-urls';
import type { CalendarRow, EventWithCalendar } from './event-rows';

/** Calendars and events as the API answers them, and as webhooks carry them. */
export const calendarPublicUrl = (baseUrl: string, uid: string) => `${baseUrl}/c/${uid}`;

/** The calendar object answered by the API. */
export function toCalendarJson(row: CalendarRow, baseUrl: string) {
  return {
    uid: row.uid,
    public_id: publicId('cal_', row.uid),
    short_link: row.short_link,
    name: row.name,
    internal_name: row.internal_name,
    description: row.description,
    timezone: row.timezone,
    week_begins: row.week_begins,
    locale: row.locale,
    public_url: calendarPublicUrl(baseUrl, row.uid),
    ask_subscriber_details: row.ask_subscriber_details,
    feed_past_days: row.feed_past_days,
    feed_max_events: row.feed_max_events,
    default_email_reminders: row.default_email_reminders,
    organizer_name: row.organizer_name,
    organizer_email: row.organizer_email,
    created_at: pgTimestampToIsoMicros(row.created_at),
    updated_at: pgTimestampToIsoMicros(row.updated_at),
  };
}

// Events of one page (and cached events) share calendar rows; present each row once.
const calendarJsonMemo = new WeakMap<CalendarRow, { baseUrl: string; json: ReturnType<typeof toCalendarJson> }>();
function calendarJson(row: CalendarRow, baseUrl: string) {
  let memo = calendarJsonMemo.get(row);
  if (!memo || memo.baseUrl !== baseUrl) {
    memo = { baseUrl, json: toCalendarJson(row, baseUrl) };
    calendarJsonMemo.set(row, memo);
  }
  return memo.json;
}

/** The event object answered by the API (docs/api.md, "Events"). */
export function toEventJson({ event: e, calendar }: EventWithCalendar, baseUrl: string) {
  const start = pgTimestampToMillis(e.date_start);
  const end = pgTimestampToMillis(e.date_end);
  const publicUrl = eventPublicUrl(baseUrl, e.uid);
  // All-day events are calendar days with no zone: shown at UTC midnight, timezone null.
  const startWall = wallClock(start, e.is_all_day ? 'UTC' : e.timezone);
  const endWall = wallClock(end, e.is_all_day ? 'UTC' : e.timezone);
  return {
    uid: e.uid,
    public_id: publicId('evt_', e.uid),
    calendar_uid: publicId('cal_', calendar.uid),
    short_link: e.short_link,
    title: e.title,
    internal_name: e.internal_name,
    is_draft: e.is_draft,
    description: e.description,
    location: e.location,
    is_all_day: e.is_all_day,
    has_rsvp: e.has_rsvp,
    has_calendar_invites: e.has_calendar_invites,
    rsvp_limit: e.rsvp_limit,
    rsvp_counts: { yes: e.rsvp_yes, maybe: e.rsvp_maybe, no: e.rsvp_no },
    is_recurring: e.recurrence_rule !== null,
    recurrence_rule: e.recurrence_rule,
    recurrence_text: e.recurrence_rule ? recurrenceText(e.recurrence_rule, e.timezone) : null,
    series_title: e.series_title,
    date_start: isoWithOffset(startWall),
    date_end: isoWithOffset(endWall),
    timezone: e.is_all_day ? null : e.timezone,
    busy_type: e.busy_type,
    reminder_before: e.reminder_before,
    email_reminders: e.email_reminders,
    date_range_formatted: formatDateRange({ isAllDay: e.is_all_day, startMs: start, endMs: end, zone: e.timezone, start: startWall, end: endWall }),
    public_url: publicUrl,
    embed_url: `${publicUrl}/embed`,
    location_url: e.location_url,
    image_url: e.image_url,
    timezone_readable: e.is_all_day ? null : timezoneReadable(e.timezone, start, startWall.offsetMinutes),
    status: e.status,
    is_protected: e.access_code_hash !== null,
    calendar: calendarJson(calendar, baseUrl),
    created_at: pgTimestampToIsoMicros(e.created_at),
    updated_at: pgTimestampToIsoMicros(e.updated_at),
  };
}
