import { pgTimestampToIsoMicros } from '../../../shared/calendar/dates';
import { publicId } from '../../../shared/ids/ids';
import type { CalendarRow } from './calendars.repository';

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
