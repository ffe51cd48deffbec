import type { Knex } from '../../../shared/db/knex';
import { UID_PATTERN } from '../../../shared/ids/ids';
import { CALENDAR_COLUMNS, type CalendarRow } from '../../../shared/events/event-rows';

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

