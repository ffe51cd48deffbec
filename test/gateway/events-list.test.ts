import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';

let gw: TestGateway;
let team: TestTeam;
let calA: { public_id: string };
let calB: { public_id: string };
const ids: Record<string, string> = {};

type Ev = { public_id: string; title: string };
const titles = (res: { body: { data: Ev[] } }) => res.body.data.map((e) => e.title);

beforeAll(async () => {
  gw = await startGateway();
  gw.clock.set('2026-06-15T12:00:00Z');
  team = await gw.newTeam();
  calA = (await team.api.post('/api/calendars', { name: 'A', timezone: 'UTC' })).body.data;
  calB = (await team.api.post('/api/calendars', { name: 'B', timezone: 'UTC' })).body.data;
  const make = async (cal: { public_id: string }, title: string, start: string, end: string, extra: Record<string, unknown> = {}) => {
    const res = await team.api.post(`/api/calendars/${cal.public_id}/events`, { title, date_start: start, date_end: end, timezone: 'UTC', ...extra });
    expect(res.status).toBe(200);
    ids[title] = res.body.data.public_id;
  };
  await make(calA, 'Past meetup', '2026-06-01 10:00', '2026-06-01 11:00', { has_rsvp: true, internal_name: 'alpha' });
  await make(calA, 'Ongoing conference', '2026-06-14 09:00', '2026-06-16 17:00', { has_rsvp: true });
  await make(calB, 'Future launch', '2026-07-01 10:00', '2026-07-01 11:00', { internal_name: 'secret-beta' });
  await make(calB, 'Future 100% sale_day', '2026-07-02 10:00', '2026-07-02 11:00');
  await make(calA, 'Today all day', '2026-06-15', '2026-06-15', { is_all_day: true });
  // another team's events never show up
  const other = await gw.newTeam();
  const theirs = (await other.api.post('/api/calendars', { name: 'X', timezone: 'UTC' })).body.data;
  await other.api.post(`/api/calendars/${theirs.public_id}/events`, { title: 'Future launch (other team)', date_start: '2026-07-01 10:00', date_end: '2026-07-01 11:00', timezone: 'UTC' });
});
afterAll(() => gw.close());

describe('listing events', () => {
  it('lists every event of the team in date_start order with meta', async () => {
    const res = await team.api.get('/api/events');
    expect(res.status).toBe(200);
    expect(titles(res)).toEqual(['Past meetup', 'Ongoing conference', 'Today all day', 'Future launch', 'Future 100% sale_day']);
    expect(res.body.meta).toEqual({ per_page: 50, next_cursor: null });
  });

  it('range=upcoming means not yet ended (ongoing events included); past means ended', async () => {
    expect(titles(await team.api.get('/api/events?range=upcoming'))).toEqual(['Ongoing conference', 'Today all day', 'Future launch', 'Future 100% sale_day']);
    expect(titles(await team.api.get('/api/events?range=past'))).toEqual(['Past meetup']);
    expect(titles(await team.api.get('/api/events?range=all'))).toHaveLength(5);
  });

  it('filters by calendar (query or path)', async () => {
    expect(titles(await team.api.get(`/api/events?calendar=${calB.public_id}`))).toEqual(['Future launch', 'Future 100% sale_day']);
    expect(titles(await team.api.get(`/api/calendars/${calA.public_id}/events?range=upcoming`))).toEqual(['Ongoing conference', 'Today all day']);
    expect((await team.api.get('/api/events?calendar=cal_AAAAAAAAAAAAAAAA')).body.data).toEqual([]);
    expect((await team.api.get('/api/calendars/cal_AAAAAAAAAAAAAAAA/events')).status).toBe(404);
  });

  it('applies a calendar filter on the calendar path too: the same calendar lists it, another lists nothing', async () => {
    expect(titles(await team.api.get(`/api/calendars/${calA.public_id}/events?calendar=${calA.public_id}&range=upcoming`))).toEqual(['Ongoing conference', 'Today all day']);
    const other = await team.api.get(`/api/calendars/${calA.public_id}/events?calendar=${calB.public_id}`);
    expect(other.status).toBe(200);
    expect(other.body).toEqual({ data: [], meta: { per_page: 50, next_cursor: null } });
    expect((await team.api.get(`/api/calendars/${calA.public_id}/events?calendar=cal_AAAAAAAAAAAAAAAA`)).body.data).toEqual([]);
    expect((await team.api.get(`/api/calendars/cal_AAAAAAAAAAAAAAAA/events?calendar=${calA.public_id}`)).status).toBe(404);
  });

  it('searches title and internal name, case-insensitively, with LIKE characters taken literally', async () => {
    expect(titles(await team.api.get('/api/events?search=FUTURE'))).toEqual(['Future launch', 'Future 100% sale_day']);
    expect(titles(await team.api.get('/api/events?search=beta'))).toEqual(['Future launch']);
    expect(titles(await team.api.get('/api/events?search=100%25'))).toEqual(['Future 100% sale_day']);
    expect(titles(await team.api.get('/api/events?search=_'))).toEqual(['Future 100% sale_day']);
    expect(titles(await team.api.get(`/api/events?search=${encodeURIComponent("'; DROP TABLE events; --")}`))).toEqual([]);
  });

  it('filters by start_date and end_date', async () => {
    expect(titles(await team.api.get('/api/events?start_date=2026-06-15'))).toEqual(['Today all day', 'Future launch', 'Future 100% sale_day']);
    expect(titles(await team.api.get('/api/events?end_date=2026-06-16T00:00:00Z'))).toEqual(['Past meetup', 'Today all day']);
    expect(titles(await team.api.get('/api/events?start_date=2026-06-01&end_date=2026-06-30'))).toEqual(['Past meetup', 'Ongoing conference', 'Today all day']);
  });

  it('end_date compares the real end, as range=past does: an all-day event has not ended before the midnight after its last day', async () => {
    const own = await gw.newTeam();
    const cal = (await own.api.post('/api/calendars', { name: 'Ends', timezone: 'UTC' })).body.data;
    const make = (title: string, extra: Record<string, unknown>) =>
      own.api.post(`/api/calendars/${cal.public_id}/events`, { title, timezone: 'UTC', ...extra });
    await make('All day today', { is_all_day: true, date_start: '2026-06-15', date_end: '2026-06-15' });
    await make('All day today, New York', { is_all_day: true, date_start: '2026-06-15', date_end: '2026-06-15', timezone: 'America/New_York' });
    await make('Timed, ends 11:00', { date_start: '2026-06-15 10:00', date_end: '2026-06-15 11:00' });
    // It is 12:00 UTC on the 15th: the all-day events are still under way, the timed one is over.
    expect(titles(await own.api.get('/api/events?range=past'))).toEqual(['Timed, ends 11:00']);
    expect(titles(await own.api.get('/api/events?range=upcoming'))).toEqual(['All day today', 'All day today, New York']);
    expect(titles(await own.api.get('/api/events?end_date=2026-06-15'))).toEqual([]);
    expect(titles(await own.api.get(`/api/events?end_date=${encodeURIComponent(gw.clock.now().toISOString())}`))).toEqual(['Timed, ends 11:00']);
    // An event that ends at the bound has ended by then; one a second later has not.
    expect(titles(await own.api.get('/api/events?end_date=2026-06-15T11:00:00Z'))).toEqual(['Timed, ends 11:00']);
    expect(titles(await own.api.get('/api/events?end_date=2026-06-15T10:59:59Z'))).toEqual([]);
    expect(titles(await own.api.get('/api/events?end_date=2026-06-16'))).toEqual(['All day today', 'Timed, ends 11:00']);
    expect(titles(await own.api.get('/api/events?end_date=2026-06-16T04:00:00Z'))).toEqual(['All day today', 'All day today, New York', 'Timed, ends 11:00']);
  });

  it.each([
    ['1', ['Past meetup', 'Ongoing conference']],
    ['true', ['Past meetup', 'Ongoing conference']],
    ['0', ['Today all day', 'Future launch', 'Future 100% sale_day']],
    ['false', ['Today all day', 'Future launch', 'Future 100% sale_day']],
  ])('rsvp=%s', async (flag, expected) => {
    expect(titles(await team.api.get(`/api/events?rsvp=${flag}`))).toEqual(expected);
  });

  it.each([
    ['1', []],
    ['0', ['Past meetup', 'Ongoing conference', 'Today all day', 'Future launch', 'Future 100% sale_day']],
  ])('invites=%s', async (flag, expected) => {
    expect(titles(await team.api.get(`/api/events?invites=${flag}`))).toEqual(expected);
  });

  it('filters by status', async () => {
    expect(titles(await team.api.get('/api/events?status=approved'))).toHaveLength(5);
    expect(titles(await team.api.get('/api/events?status=pending'))).toEqual([]);
  });

  it('rejects filter values that break their rules with one 422 listing each', async () => {
    const res = await team.api.get(`/api/events?range=soon&search=${'x'.repeat(256)}&start_date=yesterday&end_date=2026-13-01&rsvp=maybe&invites=2&per_page=0&status=done&cursor=%%%`);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['cursor', 'end_date', 'invites', 'per_page', 'range', 'rsvp', 'search', 'start_date', 'status']);
    expect(res.body.errors.range).toEqual(['The range field must be one of: all, upcoming, past.']);
    expect(res.body.errors.per_page).toEqual(['The per page field must be at least 1.']);
    const big = await team.api.get('/api/events?per_page=201');
    expect(big.body.errors).toEqual({ per_page: ['The per page field must not be greater than 200.'] });
    const forged = await team.api.get(`/api/events?cursor=${Buffer.from('["x",1]').toString('base64url')}`);
    expect(forged.body.errors).toEqual({ cursor: ['The cursor field is invalid.'] });
  });

  it('reads an empty filter value as not given, on both listings', async () => {
    const all = titles(await team.api.get('/api/events'));
    const empty = await team.api.get('/api/events?range=&search=&calendar=&start_date=&end_date=&rsvp=&invites=&status=&per_page=&cursor=');
    expect(empty.status).toBe(200);
    expect(titles(empty)).toEqual(all);
    expect(empty.body.meta).toEqual({ per_page: 50, next_cursor: null });
    const scoped = await team.api.get(`/api/calendars/${calA.public_id}/events?calendar=&range=`);
    expect(titles(scoped)).toEqual(['Past meetup', 'Ongoing conference', 'Today all day']);
  });

  it('gives a bad or repeated filter value one message', async () => {
    const res = await team.api.get('/api/events?range=upcoming&range=past&status=done&rsvp=maybe&start_date=2026-06-01&start_date=2026-06-02');
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      range: ['The range field must be one of: all, upcoming, past.'],
      status: ['The status field must be one of: approved, pending, rejected.'],
      rsvp: ['The rsvp field must be true or false.'],
      start_date: ['The start date field must be a string.'],
    });
  });
});

describe('keyset pagination', () => {
  it('walks every page with no duplicates and no gaps, also while events are added', async () => {
    const own = await gw.newTeam();
    const cal = (await own.api.post('/api/calendars', { name: 'Many', timezone: 'UTC' })).body.data;
    // Rows sharing a start time exercise the id tie-break.
    const created: string[] = [];
    for (let i = 0; i < 23; i++) {
      const start = `2026-10-${String(1 + Math.floor(i / 3)).padStart(2, '0')} 10:00`;
      const res = await own.api.post(`/api/calendars/${cal.public_id}/events`, { title: `E${i}`, date_start: start, date_end: start, timezone: 'UTC' });
      created.push(res.body.data.public_id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `/api/events?per_page=5${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await own.api.get(query);
      expect(res.status).toBe(200);
      expect(res.body.meta.per_page).toBe(5);
      seen.push(...res.body.data.map((e: Ev) => e.public_id));
      cursor = res.body.meta.next_cursor;
      pages++;
      if (pages === 2) {
        // an event added before the cursor's position does not shift later pages
        await own.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Early', date_start: '2026-01-01 10:00', date_end: '2026-01-01 10:00', timezone: 'UTC' });
      }
    } while (cursor);
    expect(pages).toBe(5);
    expect(seen).toEqual(created);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('pages through a search in (date_start, id) order, events at one instant included', async () => {
    const own = await gw.newTeam();
    const cal = (await own.api.post('/api/calendars', { name: 'Ties', timezone: 'UTC' })).body.data;
    const created: string[] = [];
    // Seven matches at one instant (more than a page), around others and one that does not match.
    const starts = ['2026-09-01 10:00', '2026-09-02 10:00', ...Array(7).fill('2026-09-03 10:00'), '2026-09-04 10:00'];
    for (const [i, start] of starts.entries()) {
      const res = await own.api.post(`/api/calendars/${cal.public_id}/events`, { title: `Tie break ${i}`, date_start: start, date_end: start, timezone: 'UTC' });
      created.push(res.body.data.public_id);
    }
    await own.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Other', date_start: '2026-09-03 10:00', date_end: '2026-09-03 10:00', timezone: 'UTC' });
    for (const range of ['all', 'upcoming']) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { data: Ev[]; meta: { next_cursor: string | null } } } = await own.api.get(
          `/api/events?search=TIE&range=${range}&per_page=3${cursor ? `&cursor=${cursor}` : ''}`,
        );
        seen.push(...res.body.data.map((e) => e.public_id));
        cursor = res.body.meta.next_cursor;
      } while (cursor);
      expect(seen).toEqual(created);
    }
  });

  it('matches a term within the title or within the internal name, never across the two', async () => {
    const own = await gw.newTeam();
    const cal = (await own.api.post('/api/calendars', { name: 'Lines', timezone: 'UTC' })).body.data;
    await own.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Board abc', internal_name: 'def notes', date_start: '2026-09-01 10:00', date_end: '2026-09-01 11:00', timezone: 'UTC' });
    expect(titles(await own.api.get(`/api/events?search=${encodeURIComponent('abc')}`))).toEqual(['Board abc']);
    expect(titles(await own.api.get(`/api/events?search=${encodeURIComponent('F NOTES')}`))).toEqual(['Board abc']);
    expect(titles(await own.api.get(`/api/events?search=${encodeURIComponent('abc\ndef')}`))).toEqual([]);
    expect(titles(await own.api.get(`/api/events?search=${encodeURIComponent('c\nd')}`))).toEqual([]);
  });

  it('pages through range=upcoming across ongoing and future events', async () => {
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { data: Ev[]; meta: { next_cursor: string | null } } } = await team.api.get(
        `/api/events?range=upcoming&per_page=1${cursor ? `&cursor=${cursor}` : ''}`,
      );
      all.push(...res.body.data.map((e) => e.title));
      cursor = res.body.meta.next_cursor;
    } while (cursor);
    expect(all).toEqual(['Ongoing conference', 'Today all day', 'Future launch', 'Future 100% sale_day']);
  });
});
