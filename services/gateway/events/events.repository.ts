import { type Knex, preparedRaw } from '../../../shared/db/knex';
import { pgTimestampToMillis } from '../../../shared/calendar/dates';
import { CALENDAR_COLUMNS, type CalendarRow, calendarSelect, EVENT_COLUMNS, type EventRow, type EventWithCalendar, eventSelect, type JoinedRow, split } from '../../../shared/events/event-rows';
import { retireShortLink } from '../public/short-links.repository';
import { reminderColumns } from '../../../shared/mail/reminders';
import type { WebhookEventType } from '../../../shared/webhooks/event-types';
import { teamListensSql } from '../../../shared/webhooks/outbox';

/**
 * A live event with its calendar: of the team, or of any team when teamId is null (public
 * pages). With `listensFor`, also whether the team has a webhook for that type (`listening`),
 * asked in the same statement: a change no webhook wants records no message.
 */
export async function findEvent(
  db: Knex,
  teamId: number | null,
  uid: string,
  opts: { calendarUid?: string; lock?: boolean; listensFor?: WebhookEventType } = {},
): Promise<(EventWithCalendar & { listening?: boolean }) | undefined> {
  const q = db('events as e')
    .join('calendars as c', 'c.id', 'e.calendar_id')
    .first([...eventSelect, ...calendarSelect, ...(opts.listensFor ? [db.raw(`${teamListensSql('e.team_id', opts.listensFor)} AS listening`)] : [])])
    .where('e.uid', uid)
    .whereNull('e.deleted_at')
    // A calendar is deleted with its events, or with its team (whose events stay until the purge).
    .whereNull('c.deleted_at');
  if (teamId !== null) q.where('e.team_id', teamId);
  if (opts.calendarUid) q.where('c.uid', opts.calendarUid);
  if (opts.lock) q.forUpdate('e');
  const found = (await q) as (JoinedRow & { listening?: boolean }) | undefined;
  if (!found) return undefined;
  const { listening, ...row } = found;
  return opts.listensFor ? { ...split(row as JoinedRow), listening } : split(row as JoinedRow);
}

/**
 * An event by uid whatever its state (deleted ones too), with only what says it existed:
 * the event feed of a gone event is empty rather than a 404, so that apps drop it, and the
 * unsubscribe link of a cancellation still works after the event is gone.
 */
export async function findEventTrace(
  db: Knex,
  uid: string,
): Promise<{ id: number; team_id: number; calendar_id: number; title: string; updated_at: string; locale: string | null } | undefined> {
  return db('events as e').join('calendars as c', 'c.id', 'e.calendar_id').first('e.id', 'e.team_id', 'e.calendar_id', 'e.title', 'e.updated_at', 'c.locale').where('e.uid', uid);
}

/** Postgres types of the writable columns, for the typed parameters of INSERT … SELECT. */
const COLUMN_TYPES: Partial<Record<keyof EventRow, string>> = {
  uid: 'text', team_id: 'bigint', short_link: 'text', title: 'text', internal_name: 'text', description: 'text',
  location: 'text', location_url: 'text', image_url: 'text', is_draft: 'boolean', is_all_day: 'boolean',
  has_rsvp: 'boolean', has_calendar_invites: 'boolean', rsvp_limit: 'integer', recurrence_rule: 'text',
  series_title: 'text', date_start: 'timestamptz', date_end: 'timestamptz', ends_at: 'timestamptz', timezone: 'text',
  busy_type: 'text', reminder_before: 'integer', email_reminders: 'integer[]', status: 'text', access_code_hash: 'text', sequence: 'integer',
};

/**
 * Creates an event in one statement: finds (and share-locks) the team's calendar, inserts
 * the event, claims its short link and takes a slot of the monthly allowance. One round
 * trip, and the usage row is locked only for this statement and its commit. A team without
 * a limit takes no slot and no lock: `counted` is false and the caller counts the event. Answers
 * undefined when the calendar does not exist; fails with take_event_slots' P0001 when the
 * allowance is spent, and with a unique violation on short_links_pkey when the link is taken.
 * `listening`: the team has a webhook for `event.created` (else no message is built).
 *
 * `alone`: only if nothing else is to commit with the event, that is no webhook of the team
 * listens for `event.created` and the event has no email reminders (its own or its
 * calendar's defaults); else nothing is written and the answer is 'deferred'. So the usual
 * create runs as this statement by itself, with no transaction around it (BEGIN and COMMIT
 * are two round trips more), and the others are made again in the caller's transaction.
 */
export async function insertEventTakingSlot(
  db: Knex,
  p: { teamId: number; calendarUid: string; period: string; values: Partial<EventRow> & { uid: string }; alone?: boolean },
): Promise<(EventWithCalendar & { counted: boolean; listening: boolean }) | 'deferred' | undefined> {
  const columns = Object.keys(p.values).filter((c) => p.values[c as keyof EventRow] !== undefined) as Array<keyof EventRow>;
  // Prepared: planning this statement cost Postgres more than running it.
  const { rows } = await preparedRaw(db, insertEventSql(columns, p.alone ?? false), [p.calendarUid, p.teamId, ...columns.map((c) => p.values[c] as Knex.Value), p.period]);
  if (!rows[0]) return undefined;
  const { counted, listening, inserted, ...row } = rows[0] as JoinedRow & { counted: boolean; listening: boolean; inserted: boolean };
  if (!inserted) return 'deferred';
  return { ...split(row as JoinedRow), counted, listening };
}

const insertEventSqls = new Map<string, string>();

/** insertEventTakingSlot's statement for these columns (their names come from COLUMN_TYPES, so safe to write in), made once. */
function insertEventSql(columns: Array<keyof EventRow>, alone: boolean): string {
  const key = `${alone}:${columns.join(',')}`;
  let sql = insertEventSqls.get(key);
  if (sql) return sql;
  const values = columns.map((c) => {
    const type = COLUMN_TYPES[c];
    if (!type) throw new Error(`events.${c} is not writable`);
    return `?::${type} AS "${c}"`;
  });
  // An event that names no reminders gets its calendar's default ones.
  if (!columns.includes('email_reminders')) values.push('cal.default_email_reminders AS email_reminders');
  const written = [...columns, ...(columns.includes('email_reminders') ? [] : ['email_reminders'])].map((c) => `"${c}"`).join(', ');
  sql = `WITH cal AS (
       SELECT ${CALENDAR_COLUMNS.join(', ')} FROM calendars
        WHERE uid = ? AND team_id = ? AND deleted_at IS NULL FOR SHARE
     ), v AS (
       SELECT cal.id AS calendar_id, ${values.join(', ')}, ${teamListensSql('cal.team_id', 'event.created')} AS listening FROM cal
     ), e AS (
       INSERT INTO events (calendar_id, ${written})
       SELECT calendar_id, ${written} FROM v${alone ? ' WHERE NOT v.listening AND cardinality(v.email_reminders) = 0' : ''}
       RETURNING ${EVENT_COLUMNS.join(', ')}
     ), link AS (
       INSERT INTO short_links (slug, event_id) SELECT lower(e.short_link), e.id FROM e WHERE e.short_link IS NOT NULL
     ), slot AS (
       SELECT take_event_slots(e.team_id, ?, 1) AS taken FROM e
     )
     SELECT ${eventSelect.join(', ')}, ${CALENDAR_COLUMNS.map((c) => `c.${c} AS c__${c}`).join(', ')}, slot.taken IS NOT NULL AS counted,
            v.listening, e.id IS NOT NULL AS inserted
       FROM v CROSS JOIN cal c LEFT JOIN e ON true LEFT JOIN slot ON true`;
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

/** Deleted: off every surface, and no reminder is sent for it any more. */
export async function softDeleteEvent(db: Knex, id: number): Promise<void> {
  await db('events').where({ id }).update({ deleted_at: db.fn.now(), updated_at: db.fn.now(), ...reminderColumns(null) });
  await retireShortLink(db, { eventId: id });
}

/** Published events: approved, not drafts, not deleted, not protected (their details are only for those with the code or a signed link). */
const published = (q: Knex.QueryBuilder, alias = '') =>
  q
    .where({ [`${alias}status`]: 'approved', [`${alias}is_draft`]: false })
    .whereNull(`${alias}deleted_at`)
    .whereNull(`${alias}access_code_hash`);

/** When an event's last occurrence ends (migration 0026): what the feed's indexes are built on. */
const SERIES_END = 'event_series_end(e.recurrence_rule, e.date_start, e.ends_at)';

/** An event of a feed, without its description (read batch by batch: descriptionsOf). */
export type FeedEvent = Omit<EventRow, 'description'>;
const FEED_COLUMNS = EVENT_COLUMNS.filter((c) => c !== 'description').map((c) => `e.${c}`);

/**
 * The published events of a calendar's feed, in (date_start, id) order: first those going
 * on at `now` or to come (the first `limit`, a series while any of its occurrences is),
 * then, while there is room, those whose last occurrence ended after `pastFrom`, the most
 * recent first. Each part walks an index from `now` and stops at the limit (0026), so
 * the cost is the window's, not the calendar's.
 */
export async function feedWindow(db: Knex, calendarId: number, opts: { now: string; pastFrom: string; limit: number }): Promise<FeedEvent[]> {
  const filtered = () => published(db('events as e').select(FEED_COLUMNS).where('e.calendar_id', calendarId), 'e.');
  const underWay = db('events as e')
    .select('e.id')
    .where('e.calendar_id', calendarId)
    .whereNull('e.deleted_at')
    .where('e.date_start', '<', opts.now)
    .whereRaw(`tstzrange(e.date_start, ${SERIES_END}, '[)') @> ?::timestamptz`, [opts.now]);
  const starting = filtered().where('e.date_start', '>=', opts.now).orderBy([{ column: 'e.date_start' }, { column: 'e.id' }]).limit(opts.limit);
  const ongoing = filtered().whereIn('e.id', underWay);
  const upcoming: FeedEvent[] = await db
    .select('*')
    .from(db.raw('((?) UNION ALL (?)) AS u', [starting, ongoing]))
    .orderBy([{ column: 'u.date_start' }, { column: 'u.id' }])
    .limit(opts.limit);
  const room = opts.limit - upcoming.length;
  const past: FeedEvent[] = room
    ? await filtered()
        .whereRaw(`${SERIES_END} > ?::timestamptz AND ${SERIES_END} <= ?::timestamptz`, [opts.pastFrom, opts.now])
        .orderByRaw(`${SERIES_END} DESC`)
        .limit(room)
    : [];
  const events = [...past, ...upcoming];
  return events.sort((a, b) => pgTimestampToMillis(a.date_start) - pgTimestampToMillis(b.date_start) || a.id - b.id);
}

/** The descriptions of these events, by id. */
export async function descriptionsOf(db: Knex, ids: number[]): Promise<Map<number, string | null>> {
  const rows: Array<{ id: number; description: string | null }> = await db('events').select('id', 'description').whereIn('id', ids);
  return new Map(rows.map((r) => [r.id, r.description]));
}

/**
 * The calendar page: the first `limit` published events of the calendar not yet ended at
 * `now`, in date order. Read as range=upcoming is (upcomingPage), so what it costs does not
 * grow with the calendar's past.
 */
export async function listUpcomingPublishedEvents(
  db: Knex,
  calendar: Pick<CalendarRow, 'id' | 'team_id'>,
  opts: { now: string; limit: number },
): Promise<EventRow[]> {
  // team_id as well: the events under way are read from the team's range index.
  const scope = { 'e.team_id': calendar.team_id, 'e.calendar_id': calendar.id };
  const filtered = () => published(db('events as e').where(scope), 'e.');
  const page = upcomingPage(db, filtered, { now: opts.now, limit: opts.limit, search: false, where: scope });
  return db
    .with('page', page)
    .from('page')
    .join('events as e', 'e.id', 'page.id')
    .select(EVENT_COLUMNS.map((c) => `e.${c}`))
    .orderBy([{ column: 'e.date_start' }, { column: 'e.id' }]);
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
 * What `search` matches, as the search index (migration 0024) holds it: the title and the
 * internal name on two lines. A term found in either is found here, and the reverse holds
 * for every term without a line break.
 */
const SEARCH_TEXT = "(e.title || E'\\n' || coalesce(e.internal_name, ''))";

/**
 * The earliest instant Postgres stores: every date_start is at or after it, so ordering by
 * the distance from it (`<->`, which the search index can walk nearest first) is date order.
 */
const EARLIEST = '4714-11-24 00:00:00+00 BC';

/**
 * The first `limit` rows of `filtered` in (date_start, id) order, as (id, date_start).
 * Without a search, the ordered walk of the listing index, which stops after the page. With
 * one, the nearest-first walk of the search index, which checks the term in the index and
 * so also stops after the page, whatever share of the events matches; that walk orders by
 * date_start alone, so the events at the last date_start it returned are read again in id
 * order (those at one instant: usually that one event).
 */
function firstByStart(db: Knex, filtered: () => Knex.QueryBuilder, limit: number, search: boolean): Knex.QueryBuilder {
  if (!search) return filtered().select('e.id', 'e.date_start').orderBy([{ column: 'e.date_start' }, { column: 'e.id' }]).limit(limit);
  const hits = filtered().select('e.id', 'e.date_start').orderByRaw('e.date_start <-> ?::timestamptz', [EARLIEST]).limit(limit);
  const lastStart = '(SELECT max(date_start) FROM hits)';
  const ties = filtered().select('e.id', 'e.date_start').whereRaw(`e.date_start = ${lastStart}`).orderBy('e.id').limit(limit);
  return db
    .withMaterialized('hits', hits)
    .select('t.id', 't.date_start')
    .from(db.raw(`((SELECT id, date_start FROM hits WHERE date_start < ${lastStart}) UNION ALL (?)) AS t`, [ties]))
    .orderBy([{ column: 't.date_start' }, { column: 't.id' }])
    .limit(limit);
}

/**
 * The first `limit` events of `filtered` not yet ended at `now`, in (date_start, id) order:
 * those starting from `now` on (firstByStart, read from `now`) and those under way. `where`
 * names the team (and calendar) alone: the events under way there are read first, from the
 * team's GiST range index, and only then tested against the other filters, so that no
 * filter (a search term above all) can lead the planner to read the past to find them.
 */
function upcomingPage(
  db: Knex,
  filtered: () => Knex.QueryBuilder,
  opts: { now: string; limit: number; search: boolean; where: Record<string, number> },
): Knex.QueryBuilder {
  const starting = firstByStart(db, () => filtered().where('e.date_start', '>=', opts.now).where('e.ends_at', '>', opts.now), opts.limit, opts.search);
  const underWay = db('events as e')
    .select('e.id')
    .where(opts.where)
    .whereNull('e.deleted_at')
    .where('e.date_start', '<', opts.now)
    .whereRaw("tstzrange(e.date_start, e.ends_at, '[)') @> ?::timestamptz", [opts.now]);
  const ongoing = filtered().select('e.id', 'e.date_start').whereIn('e.id', db('under_way').select('id'));
  return db
    .withMaterialized('under_way', underWay)
    .select('u.id', 'u.date_start')
    .from(db.raw('((?) UNION ALL (?)) AS u', [starting, ongoing]))
    .orderBy([{ column: 'u.date_start' }, { column: 'u.id' }])
    .limit(opts.limit);
}

/**
 * One page in (date_start, id) order, by keyset; every filter is applied in the walk that
 * makes the page, so a page costs about what it holds, however large the team's calendars.
 */
export async function listEvents(db: Knex, f: ListFilter): Promise<EventWithCalendar[]> {
  // Events end at or after they start (events_dates_check), so an end bound is a start bound
  // too: the ordered walks stop there instead of reading every later event.
  const ends = [f.endBy, f.range === 'past' ? f.now : undefined].filter((v): v is string => v !== undefined);
  const endBy = ends.length ? ends.reduce((a, b) => (Date.parse(b) < Date.parse(a) ? b : a)) : undefined;
  const scope: Record<string, number> = { 'e.team_id': f.teamId };
  if (f.calendarId !== undefined) scope['e.calendar_id'] = f.calendarId;
  const filtered = () => {
    const q = db('events as e').where(scope).whereNull('e.deleted_at');
    if (f.search) {
      const pattern = likePattern(f.search);
      q.whereRaw(`${SEARCH_TEXT} ILIKE ?`, [pattern]);
      // Only a term with a line break can match across the two; any other is decided above
      // alone, which keeps the planner's estimate of the matches its own (statistics of 0024).
      if (f.search.includes('\n')) q.where((w) => w.where('e.title', 'ilike', pattern).orWhere('e.internal_name', 'ilike', pattern));
    }
    if (f.startFrom) q.where('e.date_start', '>=', f.startFrom);
    // The real end, as range=past reads it: an all-day event's date_end is its last day's
    // UTC midnight, but it ends at the midnight after that day in its zone (ends_at).
    if (endBy !== undefined) q.where('e.ends_at', '<=', endBy).where('e.date_start', '<=', endBy);
    if (f.rsvp !== undefined) q.where('e.has_rsvp', f.rsvp);
    if (f.invites !== undefined) q.where('e.has_calendar_invites', f.invites);
    if (f.status) q.where('e.status', f.status);
    if (f.after) {
      q.whereRaw('(e.date_start, e.id) > (?::timestamptz, ?::bigint)', [f.after.dateStart, f.after.id]);
      // The search index cannot test the pair: the same bound on date_start alone, so that
      // its walk starts at the cursor instead of passing over every match before it.
      if (f.search) q.whereRaw('e.date_start >= ?::timestamptz', [f.after.dateStart]);
    }
    return q;
  };
  const search = Boolean(f.search);
  const page =
    f.range === 'upcoming'
      ? upcomingPage(db, filtered, { now: f.now, limit: f.limit, search, where: scope })
      : firstByStart(db, filtered, f.limit, search);

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
