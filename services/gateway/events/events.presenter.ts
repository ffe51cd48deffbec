import { pgTimestampToIsoMicros, pgTimestampToMillis } from '../../../shared/calendar/dates';
import { formatDateRange } from '../../../shared/calendar/format';
import { eventLinks } from '../calendar/platforms';
import { eventPublicUrl } from '../../../shared/links/public-urls';
import { recurrenceText } from '../../../shared/calendar/recurrence';
import { isoWithOffset, timezoneReadable, wallClock } from '../../../shared/calendar/time-zones';
import { publicId } from '../../../shared/ids/ids';
import { toCalendarJson } from '../calendars/calendars.presenter';
import { HTML_LABELS, htmlSnippets } from './event-snippets';
import type { CalendarRow } from '../calendars/calendars.repository';
import type { EventWithCalendar } from './events.repository';

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

/** `{data, links, html[, html_snippets]}` of a single-event answer. */
export function toSingleEventJson(found: EventWithCalendar, baseUrl: string, withHtml: boolean) {
  const data = toEventJson(found, baseUrl);
  const links = eventLinks(data.public_url);
  return {
    data,
    links,
    html: { ...HTML_LABELS },
    ...(withHtml ? { html_snippets: htmlSnippets(data.title, links) } : {}),
  };
}
