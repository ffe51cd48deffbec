import type { Knex } from '../../../shared/db/knex';
import { UID_PATTERN } from '../../../shared/ids/ids';

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

const live = (db: Knex) => db('calendars').whereNull('deleted_at');

export async function listCalendars(db: Knex, teamId: number): Promise<CalendarRow[]> {
  return live(db).select(CALENDAR_COLUMNS).where({ team_id: teamId }).orderBy('id');
}

/** `lock: 'share'` inside a transaction keeps the calendar from being deleted under it. */
export async function findCalendar(
  db: Knex,
  teamId: number,
  uid: string,
  lock?: 'share' | 'update',
): Promise<CalendarRow | undefined> {
  const q = live(db).first(CALENDAR_COLUMNS).where({ team_id: teamId, uid });
  if (lock === 'share') q.forShare();
  if (lock === 'update') q.forUpdate();
  return q;
}

/** A live calendar of any team, by its public uid (public pages). A malformed uid finds nothing without a query. */
export async function findPublicCalendar(db: Knex, uid: string): Promise<CalendarRow | undefined> {
  if (!UID_PATTERN.test(uid)) return undefined;
  return live(db).first(CALENDAR_COLUMNS).where({ uid });
}

export async function oldestCalendar(db: Knex, teamId: number): Promise<CalendarRow | undefined> {
  return live(db).first(CALENDAR_COLUMNS).where({ team_id: teamId }).orderBy('id');
}

export async function insertCalendar(db: Knex, values: Partial<CalendarRow>): Promise<CalendarRow> {
  const [row] = await db('calendars').insert(values).returning(CALENDAR_COLUMNS);
  return row;
}

export async function updateCalendar(db: Knex, id: number, values: Partial<CalendarRow>): Promise<CalendarRow> {
  const [row] = await db('calendars')
    .where({ id })
    .update({ ...values, updated_at: db.fn.now() })
    .returning(CALENDAR_COLUMNS);
  return row;
}

export async function hasLiveEvents(db: Knex, calendarId: number): Promise<boolean> {
  const row = await db('events').where({ calendar_id: calendarId }).whereNull('deleted_at').first(db.raw('1 AS one'));
  return row !== undefined;
}

export async function softDeleteCalendar(db: Knex, id: number): Promise<void> {
  await db('calendars').where({ id }).update({ deleted_at: db.fn.now(), short_link: null });
}

