import { SCALE_SEARCH_TERM, seedScaleEvents } from '../../bench/lib/scale-seed';
import { EVENTS as EVENTS_LISTING } from '../../services/gateway/events/events.service';
import { FEED_WINDOW } from '../../services/gateway/public/calendar-feed';
import { DUE_EVENTS_SQL } from '../../services/mail-worker/reminders.sweep';
import { createDb, dropDatabase } from '../../shared/db/knex';
import { prepareDatabase } from '../../shared/db/prepare';
import type { ApiClient, ApiResponse } from '../helpers/api-client';
import { startGateway, type TestGateway } from '../helpers/gateway';
import { captureQueries, explainReads, type PlanReads } from '../helpers/query-plans';

/**
 * Every list reads about what it returns, however large the calendar: 100,000 events in one
 * calendar (half of them past), each list asked for through the gateway, and the statement
 * the gateway sent for it run again under EXPLAIN ANALYZE. What its scans read must stay
 * within a few times the page: the page's rows found, then fetched with their calendar,
 * and the few hidden or non-matching rows passed over on the way. Reading the past, or
 * every match, or everything after a window, is hundreds of times more.
 */
const EVENTS = 100_000;
const PER_PAGE = 50;
/** The calendar page's count of upcoming events (its first page). */
const CALENDAR_PAGE = 50;
const READ_FACTOR = 5;

const NOW = new Date('2026-06-15T12:00:00Z');
const DAY_MS = 24 * 3600 * 1000;

let gw: TestGateway;
let api: ApiClient;
let databaseUrl: string;
let calendar: { uid: string; public_id: string };
/** The other team's calendar, a tenth the size, beside the large one. */
let smaller: { api: ApiClient; publicId: string; teamId: number; calendarId: number };

jest.setTimeout(120_000);

beforeAll(async () => {
  // A database of its own: 100,000 events and an ANALYZE are nothing the other suites should share.
  const url = new URL(process.env.TEST_DATABASE_URL as string);
  url.pathname = `${url.pathname}_plans`;
  databaseUrl = url.toString();
  await dropDatabase(databaseUrl);
  await prepareDatabase(databaseUrl);
  gw = await startGateway({ DATABASE_URL: databaseUrl });
  gw.clock.set(NOW);
  const team = await gw.newTeam({ plan: 'unlimited' });
  api = team.api;
  calendar = (await api.post('/api/calendars', { name: 'Large', timezone: 'Europe/Berlin' })).body.data;
  const row = await gw.db('calendars').where({ uid: calendar.uid }).first('id');
  // Another team's calendar beside it, so that the team is a real filter too.
  const other = await gw.newTeam({ plan: 'unlimited' });
  const otherCal = (await other.api.post('/api/calendars', { name: 'Other', timezone: 'UTC' })).body.data;
  const otherRow = await gw.db('calendars').where({ uid: otherCal.uid }).first('id');
  smaller = { api: other.api, publicId: otherCal.public_id, teamId: other.teamId, calendarId: otherRow.id };
  // Seeded on connections of its own: the gateway's cut statements off at 15 s, a busy machine's insert may take longer.
  // Two statements at once, as bench/scale seeds (one per core).
  const seeder = createDb(databaseUrl, { poolMax: 2, statementTimeoutMs: 300_000 });
  try {
    await seedScaleEvents(seeder, { teamId: other.teamId, calendarId: otherRow.id, count: EVENTS / 10, now: NOW, parts: 2 });
    await seedScaleEvents(seeder, { teamId: team.teamId, calendarId: row.id, count: EVENTS, now: NOW, parts: 2 });
  } finally {
    await seeder.destroy();
  }
});

afterAll(async () => {
  await gw?.close();
  if (databaseUrl) await dropDatabase(databaseUrl);
});

/**
 * Sends the request and explains the list statement it made (the one building the page):
 * the response and what that statement read.
 */
async function listed(send: () => Promise<ApiResponse>): Promise<{ res: ApiResponse; reads: PlanReads }> {
  const { result: res, queries } = await captureQueries(gw.db, send);
  expect(res.status).toBe(200);
  const lists = queries.filter((q) => q.sql.startsWith('with "page" as'));
  expect(lists).toHaveLength(1);
  return { res, reads: await explainReads(gw.db, lists[0]) };
}

function expectReadsWithin(reads: PlanReads, pageSize: number): void {
  const budget = READ_FACTOR * pageSize;
  if (reads.rows > budget) throw new Error(`read ${reads.rows} rows for a page of ${pageSize} (at most ${budget}):\n  ${reads.scans.join('\n  ')}`);
}

/** A cursor as next_cursor writes it, at an event of the calendar. */
async function cursorAt(instant: Date): Promise<string> {
  const row = await gw.db('events as e')
    .join('calendars as c', 'c.id', 'e.calendar_id')
    .where('c.uid', calendar.uid)
    .where('e.date_start', '>=', instant.toISOString())
    .orderBy([{ column: 'e.date_start' }, { column: 'e.id' }])
    .first('e.date_start', 'e.id');
  return EVENTS_LISTING.cursorAfter(gw.config.appKey, [row.date_start, row.id]);
}

describe(`list plans with ${EVENTS} events in one calendar`, () => {
  it('the seeding in parts makes each event of the series once', async () => {
    // Titles end with the event's number in the series, 1 to EVENTS.
    const [{ count, distinct, low, high }] = await gw.db('events as e')
      .join('calendars as c', 'c.id', 'e.calendar_id')
      .where('c.uid', calendar.uid)
      .select(gw.db.raw("count(*)::int AS count, count(DISTINCT substring(e.title from '[0-9]+$'))::int AS distinct, min(substring(e.title from '[0-9]+$')::int) AS low, max(substring(e.title from '[0-9]+$')::int) AS high"));
    expect({ count, distinct, low, high }).toEqual({ count: EVENTS, distinct: EVENTS, low: 1, high: EVENTS });
  });

  it('the calendar page reads its upcoming events, not the past before them', async () => {
    const { res, reads } = await listed(() => gw.anon.get(`/c/${calendar.uid}`, { headers: { Accept: 'text/html' } }));
    expect(res.text.match(/\/e\/\w+\/google"/g)).toHaveLength(CALENDAR_PAGE);
    expectReadsWithin(reads, CALENDAR_PAGE);
  });

  it('the planner knows a calendar decides its team: a smaller calendar is expected at its size', async () => {
    // Taken as independent filters, a tenth of the events (the team) times a tenth (the
    // calendar) is a hundredth: 1,000 expected for 10,000. In a database of 1.1 million a
    // 10,000-event calendar was expected at 84 and its first page read all of it to sort
    // it, at half the rate of a calendar of a million (bench/scale).
    const plan = await gw.db.raw('EXPLAIN (FORMAT JSON) SELECT id FROM events WHERE team_id = ? AND calendar_id = ? AND deleted_at IS NULL', [smaller.teamId, smaller.calendarId]);
    const expected = plan.rows[0]['QUERY PLAN'][0].Plan['Plan Rows'] as number;
    expect(expected).toBeGreaterThan(EVENTS / 10 / 2);
    expect(expected).toBeLessThan((EVENTS / 10) * 2);
    const { res, reads } = await listed(() => smaller.api.get(`/api/calendars/${smaller.publicId}/events?per_page=${PER_PAGE}`));
    expect(res.body.data).toHaveLength(PER_PAGE);
    expectReadsWithin(reads, PER_PAGE);
  });

  it('a start_date/end_date window reads each page, the last one too, not what follows the window', async () => {
    const from = new Date(NOW.getTime() - 180 * DAY_MS);
    const to = new Date(from.getTime() + 30 * DAY_MS);
    let cursor: string | null = null;
    let pages = 0;
    let events = 0;
    do {
      const path: string = `/api/calendars/${calendar.public_id}/events?start_date=${from.toISOString()}&end_date=${to.toISOString()}&per_page=${PER_PAGE}${cursor ? `&cursor=${cursor}` : ''}`;
      const { res, reads } = await listed(() => api.get(path));
      expectReadsWithin(reads, PER_PAGE);
      events += res.body.data.length;
      cursor = res.body.meta.next_cursor;
      pages++;
    } while (cursor);
    // 30 days of three years' 100,000 events: about 2,700, in some 55 pages.
    expect(events).toBeGreaterThan(2500);
    expect(pages).toBeGreaterThan(50);
  });

  it.each([
    ['range=upcoming, first page', () => `/api/events?range=upcoming&per_page=${PER_PAGE}`],
    ['range=past, a page just before now', async () => `/api/events?range=past&per_page=${PER_PAGE}&cursor=${await cursorAt(new Date(NOW.getTime() - 3600 * 1000))}`],
    ['end_date alone, a page just before it', async () => `/api/events?end_date=${NOW.toISOString()}&per_page=${PER_PAGE}&cursor=${await cursorAt(new Date(NOW.getTime() - 3600 * 1000))}`],
  ])('%s reads about its page', async (_name, path) => {
    const { reads } = await listed(async () => api.get(await path()));
    expectReadsWithin(reads, PER_PAGE);
  });

  it(`a search for a word in 0.65% of titles reads about its page, the first and those after it`, async () => {
    const first = await listed(() => api.get(`/api/events?search=${SCALE_SEARCH_TERM}&per_page=${PER_PAGE}`));
    expect(first.res.body.data).toHaveLength(PER_PAGE);
    expectReadsWithin(first.reads, PER_PAGE);
    const later = await listed(() => api.get(`/api/events?search=${SCALE_SEARCH_TERM}&per_page=${PER_PAGE}&cursor=${first.res.body.meta.next_cursor}`));
    expect(later.res.body.data).toHaveLength(PER_PAGE);
    expectReadsWithin(later.reads, PER_PAGE);
    const middle = await listed(async () => api.get(`/api/events?search=${SCALE_SEARCH_TERM}&per_page=${PER_PAGE}&cursor=${await cursorAt(NOW)}`));
    expectReadsWithin(middle.reads, PER_PAGE);
  });

  it.each([
    ['in the calendar', () => `/api/calendars/${calendar.public_id}/events?search=${SCALE_SEARCH_TERM}&per_page=${PER_PAGE}`],
    ['with range=upcoming', () => `/api/events?search=${SCALE_SEARCH_TERM}&range=upcoming&per_page=${PER_PAGE}`],
    ['with range=past', () => `/api/events?search=${SCALE_SEARCH_TERM}&range=past&per_page=${PER_PAGE}`],
    ['for a term in one event', () => `/api/events?search=${SCALE_SEARCH_TERM}%2077154&per_page=${PER_PAGE}`],
  ])('a search %s reads about its page', async (_name, path) => {
    const { reads } = await listed(() => api.get(path()));
    expectReadsWithin(reads, PER_PAGE);
  });

  it.each([
    ['now: upcoming events fill it', 0],
    ['near the last seeded event: the rest from the past 30 days', 540],
  ])('the calendar feed reads its window, not the calendar (%s)', async (_name, days) => {
    gw.clock.set(new Date(NOW.getTime() + days * DAY_MS));
    gw.caches.feeds.deleteWhere(() => true); // built afresh at the new time, not kept from the last case
    try {
      const { result: res, queries } = await captureQueries(gw.db, () => gw.anon.get(`/c/${calendar.uid}.ics`));
      expect(res.status).toBe(200);
      expect(res.text.match(/BEGIN:VEVENT/g)).toHaveLength(FEED_WINDOW.maxEvents.default);
      const windows = queries.filter((q) => q.sql.includes('event_series_end'));
      expect(windows).toHaveLength(days ? 2 : 1);
      for (const q of windows) expectReadsWithin(await explainReads(gw.db, q), FEED_WINDOW.maxEvents.default);
    } finally {
      gw.clock.set(NOW);
    }
  });

  it("the reminder sweep reads the due events, not the calendar's", async () => {
    // 40 events with a reminder due, 40 more due later, among 110,000 without reminders.
    const ids = (await gw.db('events').orderBy('id').limit(80).select('id')).map((r: { id: number }) => r.id);
    await gw.db('events').whereIn('id', ids.slice(0, 40)).update({ next_reminder_at: new Date(NOW.getTime() - 60_000).toISOString() });
    await gw.db('events').whereIn('id', ids.slice(40)).update({ next_reminder_at: new Date(NOW.getTime() + DAY_MS).toISOString() });
    await gw.db.raw('ANALYZE events');
    const sql = gw.db.raw(DUE_EVENTS_SQL, [NOW.toISOString(), 200]).toSQL().toNative();
    const reads = await explainReads(gw.db, { sql: sql.sql, bindings: [...sql.bindings] });
    expectReadsWithin(reads, 40);
  });
});
