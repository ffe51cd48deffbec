import { type Knex, preparedRaw } from '../../../shared/db/knex';
import { CALENDAR_COLUMNS, type CalendarRow } from '../calendars/calendars.repository';
import { retireShortLink } from '../public/short-links.repository';

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

const EVENT_COLUMNS = [
  'id', 'uid', 'team_id', 'calendar_id', 'short_link', 'title', 'internal_name', 'description', 'location',
  'location_url', 'image_url', 'is_draft', 'is_all_day', 'has_rsvp', 'has_calendar_invites', 'rsvp_limit',
  'recurrence_rule', 'series_title', 'date_start', 'date_end', 'ends_at', 'timezone', 'busy_type',
  'reminder_before', 'status', 'access_code_hash', 'sequence', 'rsvp_yes', 'rsvp_maybe', 'rsvp_no', 'created_at', 'updated_at',
] as const;

const eventSelect = EVENT_COLUMNS.map((c) => `e.${c}`);
const CALENDAR_FIELDS = CALENDAR_COLUMNS;
const calendarSelect = CALENDAR_FIELDS.map((c) => `c.${c} as c__${c}`);

type JoinedRow = EventRow & { [K in (typeof CALENDAR_FIELDS)[number] as `c__${K}`]: CalendarRow[K] };

/**
 * A joined row as event + calendar. The row itself serves as the event (its c__ columns
 * are simply never read); rows of one page share calendar objects.
 */
function split(row: JoinedRow, calendars?: Map<number, CalendarRow>): EventWithCalendar {
  let calendar = calendars?.get(row.c__id);
  if (!calendar) {
    const fields: Record<string, unknown> = {};
    for (const c of CALENDAR_FIELDS) fields[c] = row[`c__${c}`];
    calendar = fields as unknown as CalendarRow;
    calendars?.set(calendar.id, calendar);
  }
  return { event: row, calendar };
}

/** A live event with its calendar: of the team, or of any team when teamId is null (public pages). */
export async function findEvent(
  db: Knex,
  teamId: number | null,
  uid: string,
  opts: { calendarUid?: string; lock?: boolean } = {},
): Promise<EventWithCalendar | undefined> {
  const q = db('events as e')
    .join('calendars as c', 'c.id', 'e.calendar_id')
    .first([...eventSelect, ...calendarSelect])
    .where('e.uid', uid)
    .whereNull('e.deleted_at');
  if (teamId !== null) q.where('e.team_id', teamId);
  if (opts.calendarUid) q.where('c.uid', opts.calendarUid);
  if (opts.lock) q.forUpdate('e');
  const row = (await q) as JoinedRow | undefined;
  return row ? split(row) : undefined;
}

/** Postgres types of the writable columns, for the typed parameters of INSERT … SELECT. */
const COLUMN_TYPES: Partial<Record<keyof EventRow, string>> = {
  uid: 'text', team_id: 'bigint', short_link: 'text', title: 'text', internal_name: 'text', description: 'text',
  location: 'text', location_url: 'text', image_url: 'text', is_draft: 'boolean', is_all_day: 'boolean',
  has_rsvp: 'boolean', has_calendar_invites: 'boolean', rsvp_limit: 'integer', recurrence_rule: 'text',
  series_title: 'text', date_start: 'timestamptz', date_end: 'timestamptz', ends_at: 'timestamptz', timezone: 'text',
  busy_type: 'text', reminder_before: 'integer', status: 'text', access_code_hash: 'text', sequence: 'integer',
};

/**
 * Creates an event in one statement: finds (and share-locks) the team's calendar, inserts
 * the event, claims its short link and takes a slot of the monthly allowance. One round
 * trip, and the usage row is locked only for this statement and its commit. A team without
 * a limit takes no slot and no lock: `counted` is false and the caller counts the event. Answers
 * undefined when the calendar does not exist; fails with take_event_slots' P0001 when the
 * allowance is spent, and with a unique violation on short_links_pkey when the link is taken.
 */
export async function insertEventTakingSlot(
  db: Knex,
  p: { teamId: number; calendarUid: string; period: string; values: Partial<EventRow> & { uid: string } },
): Promise<(EventWithCalendar & { counted: boolean }) | undefined> {
  const columns = Object.keys(p.values).filter((c) => p.values[c as keyof EventRow] !== undefined) as Array<keyof EventRow>;
  // Prepared: planning this statement cost Postgres more than running it.
  const { rows } = await preparedRaw(db, insertEventSql(columns), [p.calendarUid, p.teamId, ...columns.map((c) => p.values[c] as Knex.Value), p.period]);
  if (!rows[0]) return undefined;
  const { counted, ...row } = rows[0] as JoinedRow & { counted: boolean };
  return { ...split(row as JoinedRow), counted };
}

const insertEventSqls = new Map<string, string>();

/** insertEventTakingSlot's statement for these columns (their names come from COLUMN_TYPES, so safe to write in), made once. */
function insertEventSql(columns: Array<keyof EventRow>): string {
  const key = columns.join(',');
  let sql = insertEventSqls.get(key);
  if (sql) return sql;
  const placeholders = columns.map((c) => {
    const type = COLUMN_TYPES[c];
    if (!type) throw new Error(`events.${c} is not writable`);
    return `?::${type}`;
  });
  sql = `WITH cal AS (
       SELECT ${CALENDAR_FIELDS.join(', ')} FROM calendars
        WHERE uid = ? AND team_id = ? AND deleted_at IS NULL FOR SHARE
     ), e AS (
       INSERT INTO events (calendar_id, ${columns.map((c) => `"${c}"`).join(', ')}) SELECT cal.id, ${placeholders.join(', ')} FROM cal
       RETURNING ${EVENT_COLUMNS.join(', ')}
     ), link AS (
       INSERT INTO short_links (slug, event_id) SELECT lower(e.short_link), e.id FROM e WHERE e.short_link IS NOT NULL
     ), slot AS (
       SELECT take_event_slots(e.team_id, ?, 1) AS taken FROM e
     )
     SELECT ${eventSelect.join(', ')}, ${CALENDAR_FIELDS.map((c) => `c.${c} AS c__${c}`).join(', ')}, slot.taken IS NOT NULL AS counted
       FROM e, cal c, slot`;
  insertEventSqls.set(key, sql);
  return sql;
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
  await retireShortLink(db, { eventId: id });
}

/**
 * Published events of a calendar (approved, not drafts, not deleted) in date order: the
 * public page (from `endsAfter`, limited) and the ICS feed (all of them). Protected events
 * are left out: their details are only for those with the code or a signed link.
 */
export async function listPublishedEvents(
  db: Knex,
  calendarId: number,
  opts: { endsAfter?: string; limit?: number } = {},
): Promise<EventRow[]> {
  const q = db('events')
    .select(EVENT_COLUMNS)
    .where({ calendar_id: calendarId, status: 'approved', is_draft: false })
    .whereNull('deleted_at')
    .whereNull('access_code_hash')
    .orderBy([{ column: 'date_start' }, { column: 'id' }]);
  if (opts.endsAfter) q.where('ends_at', '>', opts.endsAfter);
  if (opts.limit) q.limit(opts.limit);
  return q;
}

/**
 * When an event of the calendar last left its feed (deleted, rejected, made a draft or
 * protected: each of these updates the row), or null if none ever did; through the partial
 * index of migration 0017.
 */
/** Events not in their calendar's feed: the predicate of the partial index of migration 0017, written the same. */
const OFF_FEED_PREDICATE = "deleted_at IS NOT NULL OR status <> 'approved' OR is_draft OR access_code_hash IS NOT NULL";

export async function lastOffFeedChange(db: Knex, calendarId: number): Promise<string | null> {
  const row = await db('events')
    .where({ calendar_id: calendarId })
    .whereRaw(`(${OFF_FEED_PREDICATE})`)
    .max<{ last: string | null }>('updated_at as last')
    .first();
  return row?.last ?? null;
}

interface ListFilter {
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
    // The real end, as range=past reads it: an all-day event's date_end is its last day's
    // UTC midnight, but it ends at the midnight after that day in its zone (ends_at).
    if (f.endBy) q.where('e.ends_at', '<=', f.endBy);
    if (f.rsvp !== undefined) q.where('e.has_rsvp', f.rsvp);
    if (f.invites !== undefined) q.where('e.has_calendar_invites', f.invites);
    if (f.status) q.where('e.status', f.status);
    if (f.after) q.whereRaw('(e.date_start, e.id) > (?::timestamptz, ?::bigint)', [f.after.dateStart, f.after.id]);
    return q.orderBy([{ column: 'e.date_start' }, { column: 'e.id' }]).limit(f.limit);
  };

  let page: Knex.QueryBuilder;
  if (f.range === 'upcoming') {
    const starting = base().where('e.date_start', '>=', f.now);
    // Materialized on its own so the planner answers it from the GiST range index (a few
    // rows: what is under way right now) instead of walking the ordered index through the past.
    const ongoing = base()
      .clearOrder()
      .clear('limit')
      .where('e.date_start', '<', f.now)
      .whereRaw("tstzrange(e.date_start, e.ends_at, '[)') @> ?::timestamptz", [f.now]);
    page = db
      .withMaterialized('ongoing', ongoing)
      .select('u.id', 'u.date_start')
      .from(db.raw('((?) UNION ALL (SELECT id, date_start FROM ongoing)) AS u', [starting]))
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
  const calendars = new Map<number, CalendarRow>();
  return rows.map((r) => split(r, calendars));
}
