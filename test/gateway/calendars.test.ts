import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';

let gw: TestGateway;
let team: TestTeam;

beforeAll(async () => {
  gw = await startGateway();
  team = await gw.newTeam();
});
afterAll(() => gw.close());

const calendarBody = { name: 'Company events', timezone: 'Europe/Berlin' };

describe('calendars', () => {
  it('creates a calendar and answers the calendar object', async () => {
    const res = await team.api.post('/api/calendars', {
      ...calendarBody,
      internal_name: 'internal',
      description: 'Line one\n\nLine <two>',
      week_begins: 0,
    });
    expect(res.status).toBe(200);
    const cal = res.body.data;
    expect(cal.public_id).toBe(`cal_${cal.uid}`);
    expect(cal.uid).toMatch(/^[0-9A-Za-z]{16}$/);
    expect(cal).toMatchObject({
      name: 'Company events',
      internal_name: 'internal',
      description: '<p>Line one</p><p>Line &lt;two&gt;</p>',
      timezone: 'Europe/Berlin',
      week_begins: 0,
      short_link: null,
      public_url: `${gw.baseUrl}/c/${cal.uid}`,
    });
    expect(cal.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(cal.updated_at).toBe(cal.created_at);
  });

  it('defaults week_begins to 1 and description to an empty string', async () => {
    const res = await team.api.post('/api/calendars', calendarBody);
    expect(res.body.data).toMatchObject({ week_begins: 1, description: '', internal_name: null });
  });

  it('lists, gets, updates and deletes', async () => {
    const own = await gw.newTeam();
    const a = (await own.api.post('/api/calendars', { ...calendarBody, name: 'A' })).body.data;
    const b = (await own.api.post('/api/calendars', { ...calendarBody, name: 'B' })).body.data;
    const list = await own.api.get('/api/calendars');
    expect(list.status).toBe(200);
    expect(list.body.data.map((c: { name: string }) => c.name)).toEqual(['A', 'B']);

    const got = await own.api.get(`/api/calendars/${a.public_id}`);
    expect(got.body.data).toEqual(a);

    const updated = await own.api.put(`/api/calendars/${a.public_id}`, { name: 'A2', timezone: 'UTC', week_begins: 3 });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ name: 'A2', timezone: 'UTC', week_begins: 3, internal_name: null });

    const del = await own.api.delete(`/api/calendars/${b.public_id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ data: { public_id: b.public_id, deleted: true } });
    expect((await own.api.get(`/api/calendars/${b.public_id}`)).status).toBe(404);
    expect((await own.api.get('/api/calendars')).body.data.map((c: { name: string }) => c.name)).toEqual(['A2']);
  });

  it('PUT keeps omitted optional fields and clears explicit nulls', async () => {
    const cal = (await team.api.post('/api/calendars', { ...calendarBody, internal_name: 'keep me', short_link: 'keep-cal-link' })).body.data;
    const kept = await team.api.put(`/api/calendars/${cal.public_id}`, { name: 'Renamed', timezone: 'Europe/Berlin' });
    expect(kept.body.data).toMatchObject({ name: 'Renamed', internal_name: 'keep me', short_link: 'keep-cal-link' });
    const cleared = await team.api.put(`/api/calendars/${cal.public_id}`, { name: 'Renamed', timezone: 'Europe/Berlin', internal_name: null, short_link: null });
    expect(cleared.body.data).toMatchObject({ internal_name: null, short_link: null });
    // An empty short_link is no link, as on events.
    const linked = await team.api.put(`/api/calendars/${cal.public_id}`, { name: 'Renamed', timezone: 'Europe/Berlin', short_link: 'back-again' });
    expect(linked.body.data.short_link).toBe('back-again');
    const blank = await team.api.put(`/api/calendars/${cal.public_id}`, { name: 'Renamed', timezone: 'Europe/Berlin', short_link: '', internal_name: '' });
    expect(blank.status).toBe(200);
    expect(blank.body.data).toMatchObject({ internal_name: null, short_link: null });
    const created = await team.api.post('/api/calendars', { ...calendarBody, short_link: '' });
    expect(created.status).toBe(200);
    expect(created.body.data.short_link).toBeNull();
  });

  it('refuses to delete a calendar that still has events (409)', async () => {
    const cal = (await team.api.post('/api/calendars', calendarBody)).body.data;
    await team.api.post(`/api/calendars/${cal.public_id}/events`, {
      title: 'x',
      date_start: '2030-01-01 10:00',
      date_end: '2030-01-01 11:00',
      timezone: 'UTC',
    });
    const res = await team.api.delete(`/api/calendars/${cal.public_id}`);
    expect(res.status).toBe(409);
    // Nothing moves an event to another calendar, so the answer does not suggest it.
    expect(res.body).toEqual({ message: 'The calendar still has events; delete them first.' });
    expect((await team.api.get(`/api/calendars/${cal.public_id}`)).status).toBe(200);
  });

  it('validates every field at once', async () => {
    const res = await team.api.post('/api/calendars', { timezone: 'Mars/Olympus', week_begins: 7, name: 'x'.repeat(256), short_link: 'no spaces' });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      name: ['The name field must not be greater than 255 characters.'],
      timezone: ['The timezone field must be an IANA time zone name, such as Europe/Berlin, America/New_York or UTC.'],
      week_begins: ['The week begins field must not be greater than 6.'],
      short_link: ['The short link field must be letters, digits and hyphens only.'],
    });
    expect(res.body.message).toBe('The name field must not be greater than 255 characters. (and 3 more errors)');
    const missing = await team.api.post('/api/calendars', {});
    expect(missing.body.errors).toEqual({ name: ['The name field is required.'], timezone: ['The timezone field is required.'] });
  });

  it('refuses a name of spaces as it refuses an empty one, and keeps the spaces around a real name', async () => {
    for (const name of ['', '  ', '\t\n ']) {
      const res = await team.api.post('/api/calendars', { ...calendarBody, name });
      expect([res.status, res.body.errors]).toEqual([422, { name: ['The name field is required.'] }]);
    }
    const cal = (await team.api.post('/api/calendars', calendarBody)).body.data;
    const put = await team.api.put(`/api/calendars/${cal.public_id}`, { ...calendarBody, name: '   ' });
    expect([put.status, put.body.errors]).toEqual([422, { name: ['The name field is required.'] }]);
    const padded = await team.api.post('/api/calendars', { ...calendarBody, name: '  Padded  ' });
    expect(padded.body.data.name).toBe('  Padded  ');
  });

  it('counts the 255 characters of a name in characters, not UTF-16 units', async () => {
    const ok = await team.api.post('/api/calendars', { ...calendarBody, name: '📅'.repeat(255), internal_name: '🗓'.repeat(255) });
    expect(ok.status).toBe(200);
    expect([...ok.body.data.name]).toHaveLength(255);
    const row = await gw.db('calendars').where({ uid: ok.body.data.uid }).first();
    expect(row.name).toBe('📅'.repeat(255));
    const over = await team.api.post('/api/calendars', { ...calendarBody, name: '📅'.repeat(256) });
    expect([over.status, over.body.errors]).toEqual([422, { name: ['The name field must not be greater than 255 characters.'] }]);
  });

  it('stores and answers time zones in their IANA spelling, whatever the case sent', async () => {
    const utc = await team.api.post('/api/calendars', { name: 'S', timezone: 'utc' });
    expect([utc.status, utc.body.data.timezone]).toEqual([200, 'UTC']);
    expect((await gw.db('calendars').where({ uid: utc.body.data.uid }).first()).timezone).toBe('UTC');
    const put = await team.api.put(`/api/calendars/${utc.body.data.public_id}`, { name: 'S', timezone: 'europe/BERLIN' });
    expect(put.body.data.timezone).toBe('Europe/Berlin');
    expect((await team.api.get(`/api/calendars/${utc.body.data.public_id}`)).body.data.timezone).toBe('Europe/Berlin');
    for (const [sent, stored] of [['asia/calcutta', 'Asia/Calcutta'], ['AMERICA/ARGENTINA/BUENOS_AIRES', 'America/Argentina/Buenos_Aires'], ['etc/gmt+5', 'Etc/GMT+5'], ['Asia/Kolkata', 'Asia/Kolkata']]) {
      expect((await team.api.post('/api/calendars', { name: 'Z', timezone: sent })).body.data.timezone).toBe(stored);
    }
  });

  it('keeps short links unique across calendars, case-insensitively', async () => {
    const first = await team.api.post('/api/calendars', { ...calendarBody, short_link: 'Team-Cal' });
    expect(first.status).toBe(200);
    const second = await team.api.post('/api/calendars', { ...calendarBody, short_link: 'team-cal' });
    expect(second.status).toBe(422);
    expect(second.body.errors).toEqual({ short_link: ['The short link has already been taken.'] });
    // nothing half-written: the failed calendar does not exist
    const names = (await team.api.get('/api/calendars')).body.data.filter((c: { short_link: string }) => c.short_link?.toLowerCase() === 'team-cal');
    expect(names).toHaveLength(1);
  });

  it("answers 404 for another team's calendar exactly as for an unknown one", async () => {
    const other = await gw.newTeam();
    const theirs = (await other.api.post('/api/calendars', calendarBody)).body.data;
    const unknown = await team.api.get('/api/calendars/cal_AAAAAAAAAAAAAAAA');
    const foreign = await team.api.get(`/api/calendars/${theirs.public_id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
    expect((await team.api.put(`/api/calendars/${theirs.public_id}`, calendarBody)).status).toBe(404);
    expect((await team.api.delete(`/api/calendars/${theirs.public_id}`)).status).toBe(404);
    expect((await other.api.get(`/api/calendars/${theirs.public_id}`)).status).toBe(200);
  });
});
