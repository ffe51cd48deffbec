import type { Knex } from '../db/knex';

/**
 * Events and calendars as stored, and the joined read of an event with its calendar: what
 * the API presents (event-json.ts), read by the gateway and by the workers that tell
 * webhooks of the events they make.
 */
export interface CalendarRow {
  id: number;
  uid: string;
  team_id: number;
  name: string;
  internal_name: string | null;
  description: string;
  timezone: string;
  week_begins: number;
  /** The public pages' language when the visitor's browser names none of ours; null: English. */
  locale: string | null;
  short_link: string | null;
  ask_subscriber_details: boolean;
  /** The feed's window (null: the defaults; see public/calendar-feed.ts). */
  feed_past_days: number | null;
  feed_max_events: number | null;
  /** Minutes before, for new events that name no `email_reminders` ([]: none). */
  default_email_reminders: number[];
  /** Whom invitations name as ORGANIZER (null: the team's owner). */
  organizer_name: string | null;
  organizer_email: string | null;
  created_at: string;
  updated_at: string;
}

export const CALENDAR_COLUMNS = [
  'id',
  'uid',
  'team_id',
  'name',
  'internal_name',
  'description',
  'timezone',
  'week_begins',
  'locale',
  'short_link',
  'ask_subscriber_details',
  'feed_past_days',
  'feed_max_events',
  'default_email_reminders',
  'organizer_name',
  'organizer_email',
  'created_at',
  'updated_at',
] as const;

export interface EventRow {
  id: number;
  uid: string;
  team_id: number;
  calendar_id: number;
  short_link: string | null;
  title: string;
  internal_name: string | null;
  description: string | null;
  location: string | null;
  location_url: string | null;
  image_url: string | null;
  is_draft: boolean;
  is_all_day: boolean;
  has_rsvp: boolean;
  has_calendar_invites: boolean;
  rsvp_limit: number | null;
  recurrence_rule: string | null;
  series_title: string | null;
  date_start: string;
  date_end: string;
  ends_at: string;
  timezone: string;
  busy_type: 'busy' | 'free' | null;
  reminder_before: number | null;
  /** Email reminders: minutes before each occurrence, largest first ([]: none). */
  email_reminders: number[];
  /** When the next email reminder is due (null: none), with its occurrence and offset (shared/mail/reminders.ts). */
  next_reminder_at: string | null;
  next_reminder_occurrence: string | null;
  next_reminder_minutes: number | null;
  status: 'approved' | 'pending' | 'rejected';
  access_code_hash: string | null;
  sequence: number;
  rsvp_yes: number;
  rsvp_maybe: number;
  rsvp_no: number;
  created_at: string;
  updated_at: string;
}

export interface EventWithCalendar {
  event: EventRow;
  calendar: CalendarRow;
}

export const EVENT_COLUMNS = [
  'id', 'uid', 'team_id', 'calendar_id', 'short_link', 'title', 'internal_name', 'description', 'location',
  'location_url', 'image_url', 'is_draft', 'is_all_day', 'has_rsvp', 'has_calendar_invites', 'rsvp_limit',
  'recurrence_rule', 'series_title', 'date_start', 'date_end', 'ends_at', 'timezone', 'busy_type',
  'reminder_before', 'email_reminders', 'next_reminder_at', 'next_reminder_occurrence', 'next_reminder_minutes', 'status', 'access_code_hash', 'sequence', 'rsvp_yes', 'rsvp_maybe', 'rsvp_no', 'created_at', 'updated_at',
] as const;

export const eventSelect = EVENT_COLUMNS.map((c) => `e.${c}`);
export const calendarSelect = CALENDAR_COLUMNS.map((c) => `c.${c} as c__${c}`);

export type JoinedRow = EventRow & { [K in (typeof CALENDAR_COLUMNS)[number] as `c__${K}`]: CalendarRow[K] };

/**
 * A joined row as event + calendar. The row itself serves as the event (its c__ columns
 * are simply never read); rows of one page share calendar objects.
 */
export function split(row: JoinedRow, calendars?: Map<number, CalendarRow>): EventWithCalendar {
  let calendar = calendars?.get(row.c__id);
  if (!calendar) {
    const fields: Record<string, unknown> = {};
    for (const c of CALENDAR_COLUMNS) fields[c] = row[`c__${c}`];
    calendar = fields as unknown as CalendarRow;
    calendars?.set(calendar.id, calendar);
  }
  return { event: row, calendar };
}

/** Live events by row id, each with its calendar (rows of one calendar share its object). */
export async function eventsWithCalendars(db: Knex, ids: number[]): Promise<EventWithCalendar[]> {
  if (!ids.length) return [];
  const rows = (await db('events as e')
    .join('calendars as c', 'c.id', 'e.calendar_id')
    .select([...eventSelect, ...calendarSelect])
    .whereIn('e.id', ids)
    .whereNull('e.deleted_at')
    .orderBy('e.id')) as JoinedRow[];
  const calendars = new Map<number, CalendarRow>();
  return rows.map((row) => split(row, calendars));
}
