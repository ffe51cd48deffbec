import type { Knex } from '../../../shared/db/knex';
import type { CalendarRow } from '../calendars/calendars.repository';

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
  status: 'approved' | 'pending' | 'rejected';
  access_code_hash: string | null;
  sequence: number;
  created_at: string;
  updated_at: string;
}

export interface EventWithCalendar {
  event: EventRow;
  calendar: CalendarRow;
}

const EVENT_COLUMNS = [
  'id', 'uid', 'team_id', 'calendar_id', 'short_link', 'title', 'internal_name', 'description', 'location',
  'location_url', 'image_url', 'is_draft', 'is_all_day', 'has_rsvp', 'has_calendar_invites', 'rsvp_limit',
  'recurrence_rule', 'series_title', 'date_start', 'date_end', 'ends_at', 'timezone', 'busy_type',
  'reminder_before', 'status', 'access_code_hash', 'sequence', 'created_at', 'updated_at',
] as const;

const CALENDAR_FIELDS = [
  'id', 'uid', 'team_id', 'name', 'internal_name', 'description', 'timezone', 'week_begins', 'short_link', 'created_at', 'updated_at',
] as const;

const eventSelect = EVENT_COLUMNS.map((c) => `e.${c}`);
const calendarSelect = CALENDAR_FIELDS.map((c) => `c.${c} as c__${c}`);

type JoinedRow = EventRow & Record<string, unknown>;

function split(row: JoinedRow): EventWithCalendar {
  const event = {} as Record<string, unknown>;
  const calendar = {} as Record<string, unknown>;
  for (const [k, v] of Object.entries(row)) {
    if (k.startsWith('c__')) calendar[k.slice(3)] = v;
    else event[k] = v;
  }
  return { event: event as unknown as EventRow, calendar: calendar as unknown as CalendarRow };
}

/** A live event of the team, with its calendar. */
export async function findEvent(
  db: Knex,
  teamId: number,
  uid: string,
  opts: { calendarUid?: string; lock?: boolean } = {},
): Promise<EventWithCalendar | undefined> {
  const q = db('events as e')
    .join('calendars as c', 'c.id', 'e.calendar_id')
    .first([...eventSelect, ...calendarSelect])
    .where({ 'e.uid': uid, 'e.team_id': teamId })
    .whereNull('e.deleted_at');
  if (opts.calendarUid) q.where('c.uid', opts.calendarUid);
  if (opts.lock) q.forUpdate('e');
  const row = (await q) as JoinedRow | undefined;
  return row ? split(row) : undefined;
}

export async function insertEvent(db: Knex, values: Partial<EventRow>): Promise<EventRow> {
  const [row] = await db('events').insert(values).returning(EVENT_COLUMNS);
  return row;
}

export async function updateEvent(db: Knex, id: number, values: Partial<EventRow>): Promise<EventRow> {
  const [row] = await db('events')
    .where({ id })
    .update({ ...values, updated_at: db.fn.now() })
    .returning(EVENT_COLUMNS);
  return row;
}

export async function softDeleteEvent(db: Knex, id: number): Promise<void> {
  await db('events').where({ id }).update({ deleted_at: db.fn.now(), updated_at: db.fn.now() });
  await db('short_links').where({ event_id: id }).delete();
}

export interface ListFilter {
  teamId: number;
  calendarId?: number;
  range: 'all' | 'upcoming' | 'past';
  now: string;
  search?: string;
  startFrom?: string;
  endBy?: string;
  rsvp?: boolean;
  invites?: boolean;
  status?: string;
  after?: { dateStart: string; id: number };
  limit: number;
}

const likePattern = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * One page in (date_start, id) order, by keyset. range=upcoming is the union of events
 * starting from now (the listing index, read from `now` on) and events already under way
 * (the GiST range index), so neither half scans the past.
 */
export async function listEvents(db: Knex, f: ListFilter): Promise<EventWithCalendar[]> {
  const base = () => {
    const q = db('events as e').select('e.id', 'e.date_start').where('e.team_id', f.teamId).whereNull('e.deleted_at');
    if (f.calendarId !== undefined) q.where('e.calendar_id', f.calendarId);
    if (f.search) {
      const pattern = likePattern(f.search);
      q.where((w) => w.where('e.title', 'ilike', pattern).orWhere('e.internal_name', 'ilike', pattern));
    }
    if (f.startFrom) q.where('e.date_start', '>=', f.startFrom);
    if (f.endBy) q.where('e.date_end', '<=', f.endBy);
    if (f.rsvp !== undefined) q.where('e.has_rsvp', f.rsvp);
    if (f.invites !== undefined) q.where('e.has_calendar_invites', f.invites);
    if (f.status) q.where('e.status', f.status);
    if (f.after) q.whereRaw('(e.date_start, e.id) > (?::timestamptz, ?::bigint)', [f.after.dateStart, f.after.id]);
    return q.orderBy([{ column: 'e.date_start' }, { column: 'e.id' }]).limit(f.limit);
  };

  let page: Knex.QueryBuilder;
  if (f.range === 'upcoming') {
    const starting = base().where('e.date_start', '>=', f.now);
    const ongoing = base()
      .where('e.date_start', '<', f.now)
      .whereRaw("tstzrange(e.date_start, e.ends_at, '[)') @> ?::timestamptz", [f.now]);
    page = db
      .select('u.id', 'u.date_start')
      .from(db.raw('((?) UNION ALL (?)) AS u', [starting, ongoing]))
      .orderBy([{ column: 'u.date_start' }, { column: 'u.id' }])
      .limit(f.limit);
  } else {
    page = base();
    if (f.range === 'past') page.where('e.ends_at', '<=', f.now);
  }

  const rows = (await db
    .with('page', page)
    .from('page')
    .join('events as e', 'e.id', 'page.id')
    .join('calendars as c', 'c.id', 'e.calendar_id')
    .select([...eventSelect, ...calendarSelect])
    .orderBy([{ column: 'e.date_start' }, { column: 'e.id' }])) as JoinedRow[];
  return rows.map(split);
}
