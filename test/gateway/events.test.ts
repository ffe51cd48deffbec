import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';

let gw: TestGateway;
let team: TestTeam;
let cal: { public_id: string; uid: string };

beforeAll(async () => {
  gw = await startGateway();
  team = await gw.newTeam();
  cal = (await team.api.post('/api/calendars', { name: 'Main', timezone: 'America/New_York' })).body.data;
});
afterAll(() => gw.close());

const eventsPath = () => `/api/calendars/${cal.public_id}/events`;
const timed = {
  title: 'Quarterly review',
  date_start: '2026-07-14 13:00',
  date_end: '2026-07-14 14:30',
  timezone: 'America/New_York',
};

describe('creating an event', () => {
  it('answers 200 with the event object, links and html', async () => {
    const res = await team.api.post(eventsPath(), {
      ...timed,
      internal_name: 'q3-review',
      description: 'Agenda\n\nNumbers & plans',
      location: 'HQ, Room 4\nSecond floor',
      busy_type: 'busy',
      reminder_before: 15,
      has_rsvp: true,
      rsvp_limit: 40,
      short_link: 'q3-review',
      location_url: 'https://maps.example.com/hq',
      image_url: 'https://img.example.com/q3.png',
      series_title: 'Reviews',
      unknown_field: 'ignored',
    });
    expect(res.status).toBe(200);
    const e = res.body.data;
    expect(e.uid).toMatch(/^[0-9A-Za-z]{16}$/);
    expect(e).toEqual({
      uid: e.uid,
      public_id: `evt_${e.uid}`,
      calendar_uid: cal.public_id,
      short_link: 'q3-review',
      title: 'Quarterly review',
      internal_name: 'q3-review',
      is_draft: false,
      description: '<p>Agenda</p><p>Numbers &amp; plans</p>',
      location: 'HQ, Room 4\nSecond floor',
      is_all_day: false,
      has_rsvp: true,
      has_calendar_invites: false,
      rsvp_limit: 40,
      rsvp_counts: { yes: 0, maybe: 0, no: 0 },
      is_recurring: false,
      recurrence_rule: null,
      recurrence_text: null,
      series_title: 'Reviews',
      date_start: '2026-07-14T13:00:00-04:00',
      date_end: '2026-07-14T14:30:00-04:00',
      timezone: 'America/New_York',
      busy_type: 'busy',
      reminder_before: 15,
      email_reminders: [],
      date_range_formatted: 'Tue Jul 14, 2026 1:00 PM - 2:30 PM (EDT)',
      public_url: `${gw.baseUrl}/e/${e.uid}`,
      embed_url: `${gw.baseUrl}/e/${e.uid}/embed`,
      location_url: 'https://maps.example.com/hq',
      image_url: 'https://img.example.com/q3.png',
      timezone_readable: 'EDT / GMT-04:00',
      status: 'approved',
      is_protected: false,
      calendar: expect.objectContaining({ public_id: cal.public_id, timezone: 'America/New_York' }),
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
      updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
    });
    const pub = e.public_url;
    expect(res.body.links).toEqual({
      event_page: pub,
      auto: `${pub}/auto`,
      google: `${pub}/google`,
      apple: `${pub}/apple`,
      outlook: `${pub}/outlook`,
      outlook_web: `${pub}/outlook_web`,
      yahoo: `${pub}/yahoo`,
      office365: `${pub}/office365`,
      ics: `${pub}/ics`,
    });
    expect(Object.keys(res.body.html)).toEqual(['single-button', 'icon-buttons-single-row', 'icons', 'dot-sep', 'space-sep', 'iframe']);
    expect(res.body.html_snippets).toBeUndefined();
  });

  it('uses the zone offset in force on each date (New York in January and in July)', async () => {
    const winter = await team.api.post(eventsPath(), { ...timed, date_start: '2026-01-15T09:00:00', date_end: '2026-01-15T10:00:00' });
    const summer = await team.api.post(eventsPath(), { ...timed, date_start: '2026-07-15T09:00:00', date_end: '2026-07-15T10:00:00' });
    expect(winter.body.data).toMatchObject({ date_start: '2026-01-15T09:00:00-05:00', timezone_readable: 'EST / GMT-05:00' });
    expect(summer.body.data).toMatchObject({ date_start: '2026-07-15T09:00:00-04:00', timezone_readable: 'EDT / GMT-04:00' });
  });

  it('reads an input offset as that instant and shows it in the event zone', async () => {
    const res = await team.api.post(eventsPath(), { ...timed, date_start: '2026-07-14T17:00:00Z', date_end: '2026-07-14T19:00:00+01:00', timezone: 'Europe/Paris' });
    expect(res.body.data).toMatchObject({ date_start: '2026-07-14T19:00:00+02:00', date_end: '2026-07-14T20:00:00+02:00', timezone_readable: 'CEST / GMT+02:00' });
  });

  it('prints offsets of local mean time (not whole minutes) rounded to the minute, with the wall time to match', async () => {
    // Monrovia kept -00:44:30 until 1972; Berlin's year-1000 offset is +00:53:28.
    const isoOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;
    const res = await team.api.post(eventsPath(), { ...timed, date_start: '1971-06-01T10:00:00Z', date_end: '1971-06-01T11:00:00Z', timezone: 'Africa/Monrovia' });
    expect(res.status).toBe(200);
    const e = res.body.data;
    expect(e.date_start).toMatch(isoOffset);
    expect(e.date_end).toMatch(isoOffset);
    expect(Date.parse(e.date_start)).toBe(Date.parse('1971-06-01T10:00:00Z'));
    expect(Date.parse(e.date_end)).toBe(Date.parse('1971-06-01T11:00:00Z'));
    expect(e.date_start).toBe('1971-06-01T09:16:00-00:44');
    expect(e.timezone_readable).toBe('GMT-00:44 / GMT-00:44');
    expect(e.date_range_formatted).toBe('Tue Jun 1, 1971 9:16 AM - 10:16 AM (GMT-00:44)');
    // Wall time without an offset is read with the offset the API prints.
    const wall = await team.api.post(eventsPath(), { ...timed, date_start: '1971-06-01 09:16', date_end: '1971-06-01 10:16', timezone: 'Africa/Monrovia' });
    expect(wall.body.data).toMatchObject({ date_start: e.date_start, date_end: e.date_end });
    const berlin = await team.api.post(eventsPath(), { ...timed, date_start: '1000-06-01T10:00:00Z', date_end: '1000-06-01T10:30:00Z', timezone: 'Europe/Berlin' });
    expect(berlin.body.data).toMatchObject({ date_start: '1000-06-01T10:53:00+00:53', timezone_readable: 'GMT+00:53 / GMT+00:53' });
    expect(Date.parse(berlin.body.data.date_end)).toBe(Date.parse('1000-06-01T10:30:00Z'));
    const page = await fetch(res.body.data.public_url);
    expect(await page.text()).toContain('GMT-00:44');
  });

  it('stores and answers the IANA spelling of a zone sent in another case', async () => {
    const res = await team.api.post(eventsPath(), { ...timed, timezone: 'europe/berlin' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ timezone: 'Europe/Berlin', date_start: '2026-07-14T13:00:00+02:00', timezone_readable: 'CEST / GMT+02:00' });
    expect((await gw.db('events').where({ uid: res.body.data.uid }).first()).timezone).toBe('Europe/Berlin');
    const put = await team.api.put(`${eventsPath()}/${res.body.data.public_id}`, { ...timed, timezone: 'AMERICA/NEW_YORK' });
    expect(put.body.data.timezone).toBe('America/New_York');
    const simple = await team.api.post('/api/events', { title: 'Simple', start: '2026-07-14 13:00', timezone: 'utc' });
    expect(simple.body.data.timezone).toBe('UTC');
  });

  it('shows UTC events with +00:00, never Z', async () => {
    const res = await team.api.post(eventsPath(), { ...timed, timezone: 'UTC' });
    expect(res.body.data.date_start).toBe('2026-07-14T13:00:00+00:00');
  });

  it('stores all-day events as calendar days with an inclusive last day', async () => {
    const res = await team.api.post(eventsPath(), { title: 'Offsite', is_all_day: true, date_start: '2026-04-14', date_end: '2026-04-16', timezone: 'Europe/Amsterdam' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      is_all_day: true,
      date_start: '2026-04-14T00:00:00+00:00',
      date_end: '2026-04-16T00:00:00+00:00',
      timezone: null,
      timezone_readable: null,
      date_range_formatted: 'Tue Apr 14, 2026 - Thu Apr 16, 2026 (all day)',
    });
    const single = await team.api.post(eventsPath(), { title: 'Holiday', is_all_day: 1, date_start: '2026-12-25', date_end: '2026-12-25', timezone: 'UTC' });
    expect(single.body.data.date_range_formatted).toBe('Fri Dec 25, 2026 (all day)');
  });

  it('reads recurrence rules and explains them', async () => {
    const res = await team.api.post(eventsPath(), { ...timed, recurrence_rule: 'RRULE:freq=weekly;byday=TU;count=10' });
    expect(res.body.data).toMatchObject({
      is_recurring: true,
      recurrence_rule: 'FREQ=WEEKLY;BYDAY=TU;COUNT=10',
      recurrence_text: 'every week on Tuesday, 10 times',
    });
    const secondly = await team.api.post(eventsPath(), { ...timed, recurrence_rule: 'FREQ=SECONDLY;INTERVAL=15' });
    expect(secondly.status).toBe(200);
    expect(secondly.body.data).toMatchObject({ recurrence_rule: 'FREQ=SECONDLY;INTERVAL=15', recurrence_text: 'every 15 seconds' });
  });

  it('stores an UNTIL in the form RFC 5545 requires beside the start: UTC for timed events, a date for all-day ones', async () => {
    const berlin = { ...timed, date_start: '2027-01-05 10:00', date_end: '2027-01-05 11:00', timezone: 'Europe/Berlin' };
    // A date: the end of that day in the event's zone (23:59:59 CET = 22:59:59Z).
    const byDate = await team.api.post(eventsPath(), { ...berlin, recurrence_rule: 'FREQ=DAILY;UNTIL=20270110' });
    expect(byDate.status).toBe(200);
    expect(byDate.body.data).toMatchObject({ recurrence_rule: 'FREQ=DAILY;UNTIL=20270110T225959Z', recurrence_text: 'every day until January 10, 2027' });
    // A floating time: wall time in the event's zone.
    const floating = await team.api.post(eventsPath(), { ...berlin, recurrence_rule: 'FREQ=DAILY;UNTIL=20270110T100000;BYHOUR=10' });
    expect(floating.body.data.recurrence_rule).toBe('FREQ=DAILY;UNTIL=20270110T090000Z;BYHOUR=10');
    // West of UTC the instant falls on the next UTC day; the text still names the event's day.
    const newYork = await team.api.post(eventsPath(), { ...timed, recurrence_rule: 'FREQ=WEEKLY;UNTIL=20270110' });
    expect(newYork.body.data).toMatchObject({ recurrence_rule: 'FREQ=WEEKLY;UNTIL=20270111T045959Z', recurrence_text: 'every week until January 10, 2027' });
    const utc = await team.api.post(eventsPath(), { ...berlin, recurrence_rule: 'FREQ=DAILY;UNTIL=20270110T090000Z' });
    expect(utc.body.data.recurrence_rule).toBe('FREQ=DAILY;UNTIL=20270110T090000Z');
    // All-day: a date-time becomes its date (a UTC one, its date in the event's zone).
    const allDay = { title: 'Holidays', is_all_day: true, date_start: '2027-01-05', date_end: '2027-01-05', timezone: 'America/New_York' };
    const dayFloating = await team.api.post(eventsPath(), { ...allDay, recurrence_rule: 'FREQ=DAILY;UNTIL=20270110T100000' });
    expect(dayFloating.body.data.recurrence_rule).toBe('FREQ=DAILY;UNTIL=20270110');
    const dayUtc = await team.api.post(eventsPath(), { ...allDay, recurrence_rule: 'FREQ=DAILY;UNTIL=20270111T030000Z' });
    expect(dayUtc.body.data.recurrence_rule).toBe('FREQ=DAILY;UNTIL=20270110');
    // A PUT that makes the event all-day brings a kept rule along.
    const put = await team.api.put(`${eventsPath()}/${byDate.body.data.public_id}`, { ...berlin, is_all_day: true, date_start: '2027-01-05', date_end: '2027-01-05' });
    expect(put.body.data.recurrence_rule).toBe('FREQ=DAILY;UNTIL=20270110');

    const ics = await (await fetch(`${floating.body.data.public_url}/ics`)).text();
    expect(ics).toContain('DTSTART;TZID=Europe/Berlin:20270105T100000');
    expect(ics).toContain('RRULE:FREQ=DAILY;UNTIL=20270110T090000Z;BYHOUR=10');
    const dayIcs = await (await fetch(`${dayFloating.body.data.public_url}/ics`)).text();
    expect(dayIcs).toContain('RRULE:FREQ=DAILY;UNTIL=20270110\r\n');

    // A rule stored before UNTIL was fitted on write is fitted where it is published.
    const older = (await team.api.post(eventsPath(), { ...berlin, title: 'Stored long ago' })).body.data;
    await gw.db('events').where({ uid: older.uid }).update({ recurrence_rule: 'FREQ=DAILY;UNTIL=20270110' });
    const olderIcs = await (await fetch(`${older.public_url}/ics`)).text();
    expect(olderIcs).toContain('RRULE:FREQ=DAILY;UNTIL=20270110T225959Z\r\n');
    const google = new URL((await fetch(`${older.public_url}/google`, { redirect: 'manual' })).headers.get('location') as string);
    expect(google.searchParams.get('recur')).toBe('RRULE:FREQ=DAILY;UNTIL=20270110T225959Z');
  });

  it('keeps safe HTML in descriptions and removes scripts', async () => {
    const res = await team.api.post(eventsPath(), {
      ...timed,
      description: '<p onclick="x()">Hi <strong>all</strong><script>alert(1)</script> <a href="javascript:alert(1)">x</a> <a href="https://ok.example">ok</a></p>',
    });
    expect(res.body.data.description).toBe(
      '<p>Hi <strong>all</strong> <a rel="noopener noreferrer nofollow" target="_blank">x</a> <a href="https://ok.example" rel="noopener noreferrer nofollow" target="_blank">ok</a></p>',
    );
  });

  it('adds escaped html_snippets with with_html=true', async () => {
    const res = await team.api.post(`${eventsPath()}?with_html=true`, { ...timed, title: '<script>alert(1)</script>' });
    const snippets = res.body.html_snippets;
    expect(Object.keys(snippets)).toEqual(['single-button', 'icon-buttons-single-row', 'icons', 'dot-sep', 'space-sep', 'iframe']);
    // The iframe variant: the widget's frame and its fixed loader script, nothing of the title's.
    expect(snippets.iframe.match(/</g)).toHaveLength(4);
    expect(snippets.iframe).toContain(`<iframe src="${res.body.data.public_url}/embed" title="Add to calendar: &lt;script&gt;alert(1)&lt;/script&gt;"`);
    for (const markup of Object.values<string>(snippets)) {
      if (markup !== snippets.iframe) expect(markup).not.toContain('<script>');
      expect(markup).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(markup).toContain(res.body.data.public_url);
    }
    expect(snippets['dot-sep']).toContain(`href="${res.body.links.google}"`);
  });

  it('keeps short links unique among events and calendars', async () => {
    await team.api.post('/api/calendars', { name: 'Linked', timezone: 'UTC', short_link: 'shared-slug' });
    const res = await team.api.post(eventsPath(), { ...timed, short_link: 'SHARED-slug' });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ short_link: ['The short link has already been taken.'] });
  });

  it("answers 404 for an unknown or another team's calendar", async () => {
    const other = await gw.newTeam();
    const theirs = (await other.api.post('/api/calendars', { name: 'Theirs', timezone: 'UTC' })).body.data;
    expect((await team.api.post(`/api/calendars/${theirs.public_id}/events`, timed)).status).toBe(404);
    expect((await team.api.post('/api/calendars/cal_nope/events', timed)).status).toBe(404);
  });
});

describe('validation (422, nothing written)', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, string[]>]> = [
    ['title required', { title: undefined }, { title: ['The title field is required.'] }],
    ['title max 255', { title: 'x'.repeat(256) }, { title: ['The title field must not be greater than 255 characters.'] }],
    ['internal_name max 255', { internal_name: 'x'.repeat(256) }, { internal_name: ['The internal name field must not be greater than 255 characters.'] }],
    ['location max 255', { location: 'x'.repeat(256) }, { location: ['The location field must not be greater than 255 characters.'] }],
    ['series_title max 255', { series_title: 'x'.repeat(256) }, { series_title: ['The series title field must not be greater than 255 characters.'] }],
    ['date_start required', { date_start: undefined }, { date_start: ['The date start field is required.'] }],
    ['date_start valid', { date_start: '2026-02-30 10:00' }, { date_start: ['The date start field must be a date: YYYY-MM-DD, YYYY-MM-DD HH:mm[:ss], or ISO 8601 such as 2026-07-14T13:00:00+02:00.'] }],
    ['date_end required', { date_end: undefined }, { date_end: ['The date end field is required.'] }],
    ['date_end valid', { date_end: 'tomorrow' }, { date_end: ['The date end field must be a date: YYYY-MM-DD, YYYY-MM-DD HH:mm[:ss], or ISO 8601 such as 2026-07-14T13:00:00+02:00.'] }],
    ['date_end after start', { date_end: '2026-07-14 12:59' }, { date_end: ['The date end field must be a date after or equal to date start.'] }],
    ['timezone required', { timezone: undefined }, { timezone: ['The timezone field is required.'] }],
    ['timezone valid', { timezone: 'Moon/Base' }, { timezone: ['The timezone field must be an IANA time zone name, such as Europe/Berlin, America/New_York or UTC.'] }],
    ['busy_type values', { busy_type: 'tentative' }, { busy_type: ['The busy type field must be one of: busy, free.'] }],
    ['reminder_before integer', { reminder_before: 'soon' }, { reminder_before: ['The reminder before field must be an integer.'] }],
    ['reminder_before min 0', { reminder_before: -1 }, { reminder_before: ['The reminder before field must be at least 0.'] }],
    ['short_link pattern', { short_link: 'with space' }, { short_link: ['The short link field must be letters, digits and hyphens only.'] }],
    ['short_link max 50', { short_link: 'a'.repeat(51) }, { short_link: ['The short link field must not be greater than 50 characters.'] }],
    ['is_draft boolean', { is_draft: 'maybe' }, { is_draft: ['The is draft field must be true or false.'] }],
    ['is_all_day boolean', { is_all_day: 2 }, { is_all_day: ['The is all day field must be true or false.'] }],
    ['has_rsvp boolean', { has_rsvp: 'yes' }, { has_rsvp: ['The has rsvp field must be true or false.'] }],
    ['recurrence_rule RRULE', { recurrence_rule: 'FREQ=FOO' }, { recurrence_rule: ['The recurrence rule field must be a valid RRULE: it has an invalid FREQ value "FOO".'] }],
    ['rsvp_limit min 1', { rsvp_limit: 0 }, { rsvp_limit: ['The rsvp limit field must be at least 1.'] }],
    ['location_url URL', { location_url: 'not a url' }, { location_url: ['The location url field must be a valid URL.'] }],
    ['image_url http(s)', { image_url: 'javascript:alert(1)' }, { image_url: ['The image url field must be a valid URL.'] }],
    ['access_code length', { access_code: 'abc' }, { access_code: ['The access code field must be at least 4 characters.'] }],
    ['title string', { title: 42 }, { title: ['The title field must be a string.'] }],
  ];

  it.each(cases)('%s', async (_name, change, errors) => {
    const before = await gw.db('events').where({ team_id: team.teamId }).count<{ count: number }[]>('* as count');
    const body: Record<string, unknown> = { ...timed, ...change };
    for (const [k, v] of Object.entries(change)) if (v === undefined) delete body[k];
    const res = await team.api.post(eventsPath(), body);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual(errors);
    expect(res.body.message).toBe(Object.values(errors)[0][0]);
    const after = await gw.db('events').where({ team_id: team.teamId }).count<{ count: number }[]>('* as count');
    expect(after[0].count).toBe(before[0].count);
  });

  it('takes an empty busy_type as null, like the other nullable fields, and gives other bad values one message', async () => {
    const res = await team.api.post(eventsPath(), { ...timed, busy_type: '' });
    expect(res.status).toBe(200);
    expect(res.body.data.busy_type).toBeNull();
    const busy = (await team.api.post(eventsPath(), { ...timed, busy_type: 'busy' })).body.data;
    const cleared = await team.api.put(`${eventsPath()}/${busy.public_id}`, { ...timed, busy_type: '' });
    expect(cleared.body.data.busy_type).toBeNull();
    for (const bad of [5, ['busy']]) {
      const wrong = await team.api.post(eventsPath(), { ...timed, busy_type: bad });
      expect(wrong.body.errors).toEqual({ busy_type: ['The busy type field must be one of: busy, free.'] });
    }
  });

  it('does not call an optional field sent empty "required"', async () => {
    const res = await team.api.post(eventsPath(), { ...timed, access_code: '' });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ access_code: ['The access code field must not be empty.'] });
  });

  it('reports every failing field at once, date order included', async () => {
    const res = await team.api.post(eventsPath(), { date_start: '2026-07-14 13:00', date_end: '2026-07-14 12:00', timezone: 'UTC', busy_type: 'x', reminder_before: -5 });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      title: ['The title field is required.'],
      busy_type: ['The busy type field must be one of: busy, free.'],
      reminder_before: ['The reminder before field must be at least 0.'],
      date_end: ['The date end field must be a date after or equal to date start.'],
    });
    expect(res.body.message).toBe('The title field is required. (and 3 more errors)');
  });

  it('answers 400 for malformed JSON, 415 for other content types, 413 for huge bodies', async () => {
    const bad = await team.api.request('POST', eventsPath(), { raw: '{"title":' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'The request body is not valid JSON.' });
    const form = await team.api.request('POST', eventsPath(), { raw: 'title=x', contentType: 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    const latin1 = await team.api.request('POST', eventsPath(), { raw: '{"title":"x"}', contentType: 'application/json; charset=iso-8859-1' });
    expect(latin1.status).toBe(415);
    expect(latin1.body).toEqual({ message: 'Unsupported content type: send a UTF-8 encoded body.' });
    const huge = await team.api.post(eventsPath(), { ...timed, description: 'x'.repeat(1_100_000) });
    expect(huge.status).toBe(413);
    const array = await team.api.request('POST', eventsPath(), { raw: '[1,2]' });
    expect(array.status).toBe(422);
    expect(array.body.errors).toEqual({ body: ['The request body must be a JSON object.'] });
  });

  it('answers every JSON body that is not an object with the same 422, on every route that takes a body', async () => {
    const created = (await team.api.post(eventsPath(), timed)).body.data;
    const before = await gw.db('events').where({ team_id: team.teamId }).count<{ count: number }[]>('* as count');
    for (const raw of ['"str"', 'null', '5', 'true', '[]', ' [1,2] ']) {
      for (const [method, path] of [
        ['POST', eventsPath()],
        ['PUT', `${eventsPath()}/${created.public_id}`],
        ['DELETE', `/api/events/${created.public_id}`],
        ['POST', '/api/calendars'],
      ]) {
        const res = await team.api.request(method, path, { raw });
        expect([raw, method, path, res.status, res.body]).toEqual([
          raw,
          method,
          path,
          422,
          { message: 'The request body must be a JSON object.', errors: { body: ['The request body must be a JSON object.'] } },
        ]);
      }
    }
    const after = await gw.db('events').where({ team_id: team.teamId }).count<{ count: number }[]>('* as count');
    expect(after[0].count).toBe(before[0].count);
    expect((await team.api.get(`/api/events/${created.public_id}`)).status).toBe(200);
  });

  it('answers 400 for a JSON body that is not valid UTF-8, instead of storing U+FFFD', async () => {
    const before = await gw.db('events').where({ team_id: team.teamId }).count<{ count: number }[]>('* as count');
    const json = JSON.stringify({ ...timed, title: 'Bad XX bytes' });
    const raw = Buffer.from(json, 'utf8');
    const at = raw.indexOf('XX');
    raw[at] = 0xff;
    raw[at + 1] = 0xfe;
    const res = await team.api.request('POST', eventsPath(), { raw });
    expect([res.status, res.body]).toEqual([400, { message: 'The request body is not valid UTF-8.' }]);
    // A lone surrogate half encoded in bytes (CESU-8) is not UTF-8 either; escapes are fine.
    const cesu = await team.api.request('POST', eventsPath(), { raw: Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]) });
    expect(cesu.status).toBe(400);
    const after = await gw.db('events').where({ team_id: team.teamId }).count<{ count: number }[]>('* as count');
    expect(after[0].count).toBe(before[0].count);
    const fine = await team.api.request('POST', eventsPath(), { raw: Buffer.from(JSON.stringify({ ...timed, title: 'Grüße 👋 \u00e9' }), 'utf8') });
    expect([fine.status, fine.body.data?.title]).toEqual([200, 'Grüße 👋 é']);
  });

  it('refuses a title of spaces as it refuses an empty one, and keeps the spaces around a real title', async () => {
    for (const title of ['', '   ', '\u00a0\t']) {
      const res = await team.api.post(eventsPath(), { ...timed, title });
      expect([res.status, res.body.errors]).toEqual([422, { title: ['The title field is required.'] }]);
      const simple = await team.api.post('/api/events', { title, start: '2026-07-14 13:00' });
      expect([simple.status, simple.body.errors]).toEqual([422, { title: ['The title field is required.'] }]);
    }
    const created = (await team.api.post(eventsPath(), { ...timed, title: '  Padded  ' })).body.data;
    expect(created.title).toBe('  Padded  ');
    const put = await team.api.put(`${eventsPath()}/${created.public_id}`, { ...timed, title: ' ' });
    expect([put.status, put.body.errors]).toEqual([422, { title: ['The title field is required.'] }]);
  });

  it('counts the 255 characters of a title in characters (255 emoji fit, 256 do not)', async () => {
    const title = '🎉'.repeat(255);
    const ok = await team.api.post(eventsPath(), { ...timed, title, location: '📍'.repeat(255), internal_name: 'é'.repeat(255) });
    expect(ok.status).toBe(200);
    expect(ok.body.data.title).toBe(title);
    expect((await gw.db('events').where({ uid: ok.body.data.uid }).first()).title).toBe(title);
    const over = await team.api.post(eventsPath(), { ...timed, title: `${title}🎉`, location: '📍'.repeat(256) });
    expect([over.status, over.body.errors]).toEqual([
      422,
      { title: ['The title field must not be greater than 255 characters.'], location: ['The location field must not be greater than 255 characters.'] },
    ]);
    const search = await team.api.get(`/api/events?search=${encodeURIComponent('🎉'.repeat(255))}`);
    expect(search.status).toBe(200);
    expect(search.body.data.map((e: { public_id: string }) => e.public_id)).toContain(ok.body.data.public_id);
  });
});

describe('reading, updating and deleting', () => {
  it('gets an event by both paths, with html_snippets on request', async () => {
    const created = (await team.api.post(eventsPath(), timed)).body;
    const a = await team.api.get(`/api/events/${created.data.public_id}`);
    const b = await team.api.get(`${eventsPath()}/${created.data.public_id}?with_html=1`);
    expect(a.status).toBe(200);
    expect(a.body).toEqual(created);
    expect(b.body.data).toEqual(created.data);
    expect(Object.keys(b.body.html_snippets)).toHaveLength(6);
    const other = (await team.api.post('/api/calendars', { name: 'Other', timezone: 'UTC' })).body.data;
    expect((await team.api.get(`/api/calendars/${other.public_id}/events/${created.data.public_id}`)).status).toBe(404);
  });

  it('PUT requires the required fields, keeps omitted optional fields and clears explicit nulls', async () => {
    const created = (await team.api.post(eventsPath(), { ...timed, location: 'Room 1', internal_name: 'keep', reminder_before: 10, short_link: 'put-keeps' })).body.data;
    const path = `${eventsPath()}/${created.public_id}`;
    const missing = await team.api.put(path, { location: 'x' });
    expect(missing.status).toBe(422);
    expect(Object.keys(missing.body.errors).sort()).toEqual(['date_end', 'date_start', 'timezone', 'title']);

    const kept = await team.api.put(path, { ...timed, title: 'Renamed', date_start: '2026-07-14 15:00', date_end: '2026-07-14 16:00' });
    expect(kept.status).toBe(200);
    expect(kept.body.data).toMatchObject({
      title: 'Renamed',
      location: 'Room 1',
      internal_name: 'keep',
      reminder_before: 10,
      short_link: 'put-keeps',
      date_start: '2026-07-14T15:00:00-04:00',
    });
    expect(kept.body.data.created_at).toBe(created.created_at);
    expect(kept.body.data.updated_at > created.updated_at).toBe(true);

    const cleared = await team.api.put(path, { ...timed, location: null, internal_name: null, reminder_before: null, short_link: null, send_invite_updates: false });
    expect(cleared.body.data).toMatchObject({ location: null, internal_name: null, reminder_before: null, short_link: null });
    // the released short link is free again
    expect((await team.api.post(eventsPath(), { ...timed, short_link: 'put-keeps' })).status).toBe(200);
  });

  it('deletes on either path; afterwards the event is gone everywhere', async () => {
    const one = (await team.api.post(eventsPath(), timed)).body.data;
    const two = (await team.api.post(eventsPath(), { ...timed, short_link: 'deleted-link' })).body.data;
    const del1 = await team.api.delete(`${eventsPath()}/${one.public_id}`, { notify_invitees: true });
    expect(del1.status).toBe(200);
    expect(del1.body).toEqual({ data: { public_id: one.public_id, deleted: true, invitees_notified: 0 } });
    const del2 = await team.api.delete(`/api/events/${two.public_id}`);
    expect(del2.body.data).toMatchObject({ public_id: two.public_id, deleted: true });
    for (const e of [one, two]) {
      expect((await team.api.get(`/api/events/${e.public_id}`)).status).toBe(404);
      expect((await team.api.put(`${eventsPath()}/${e.public_id}`, timed)).status).toBe(404);
      expect((await team.api.delete(`/api/events/${e.public_id}`)).status).toBe(404);
    }
    const listed = await team.api.get('/api/events?per_page=200&search=Quarterly');
    expect(listed.body.data.map((e: { public_id: string }) => e.public_id)).not.toContain(one.public_id);
    expect((await team.api.post(eventsPath(), { ...timed, short_link: 'deleted-link' })).status).toBe(200);
  });

  it("answers 404 for another team's event on every path", async () => {
    const other = await gw.newTeam();
    const theirCal = (await other.api.post('/api/calendars', { name: 'T', timezone: 'UTC' })).body.data;
    const theirs = (await other.api.post(`/api/calendars/${theirCal.public_id}/events`, timed)).body.data;
    const unknown = await team.api.get('/api/events/evt_0000000000000000');
    for (const res of [
      await team.api.get(`/api/events/${theirs.public_id}`),
      await team.api.get(`/api/calendars/${theirCal.public_id}/events/${theirs.public_id}`),
      await team.api.put(`/api/calendars/${theirCal.public_id}/events/${theirs.public_id}`, timed),
      await team.api.delete(`/api/calendars/${theirCal.public_id}/events/${theirs.public_id}`),
      await team.api.delete(`/api/events/${theirs.public_id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual(unknown.body);
    }
    expect((await other.api.get(`/api/events/${theirs.public_id}`)).status).toBe(200);
  });
});

describe('POST /api/events (simplified form)', () => {
  it('fills one hour, the calendar zone and the oldest calendar', async () => {
    const own = await gw.newTeam();
    const first = (await own.api.post('/api/calendars', { name: 'First', timezone: 'Europe/London' })).body.data;
    await own.api.post('/api/calendars', { name: 'Second', timezone: 'Asia/Tokyo' });
    const res = await own.api.post('/api/events', { title: 'Coffee', start: '2026-07-01 10:00' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      calendar_uid: first.public_id,
      timezone: 'Europe/London',
      date_start: '2026-07-01T10:00:00+01:00',
      date_end: '2026-07-01T11:00:00+01:00',
      is_all_day: false,
    });
    expect(res.body.links.google).toBe(`${res.body.data.public_url}/google`);
  });

  it('makes an all-day event of a bare date and honours calendar, end and timezone', async () => {
    const own = await gw.newTeam();
    const cal2 = (await own.api.post('/api/calendars', { name: 'Chosen', timezone: 'UTC' })).body.data;
    const allDay = await own.api.post('/api/events', { title: 'Trip', start: '2026-08-03', calendar: cal2.public_id });
    expect(allDay.body.data).toMatchObject({ is_all_day: true, date_start: '2026-08-03T00:00:00+00:00', date_end: '2026-08-03T00:00:00+00:00', calendar_uid: cal2.public_id });
    const explicit = await own.api.post('/api/events', { title: 'Call', start: '2026-08-03T09:00', end: '2026-08-03T09:30', timezone: 'America/Chicago', calendar: cal2.public_id });
    expect(explicit.body.data).toMatchObject({ date_start: '2026-08-03T09:00:00-05:00', date_end: '2026-08-03T09:30:00-05:00', timezone: 'America/Chicago' });
  });

  it('creates "My Calendar" once for a team without calendars, even when racing', async () => {
    const own = await gw.newTeam();
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => own.api.post('/api/events', { title: `First ${i}`, start: '2026-09-01 10:00', timezone: 'UTC' })),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const calendars = (await own.api.get('/api/calendars')).body.data;
    expect(calendars).toHaveLength(1);
    expect(calendars[0]).toMatchObject({ name: 'My Calendar', timezone: 'UTC' });
  });

  it('a first event refused by the monthly limit leaves no "My Calendar" behind', async () => {
    const own = await gw.newTeam({ eventLimit: 0 });
    const res = await own.api.post('/api/events', { title: 'Over the limit', start: '2026-09-01 10:00' });
    expect(res.status).toBe(409);
    expect((await own.api.get('/api/calendars')).body.data).toEqual([]);
  });

  it('blames the start, not an end nobody sent, when the default hour runs past the year 9999', async () => {
    const own = await gw.newTeam();
    const late = await own.api.post('/api/events', { title: 'Last hour', start: '9999-12-31 23:30', timezone: 'UTC' });
    expect(late.status).toBe(422);
    expect(late.body.errors).toEqual({ start: ["The start field must leave room for the event's duration before the year 10000."] });
    // An end that was sent is still the end's problem.
    const sent = await own.api.post('/api/events', { title: 'Last hour', start: '9999-12-31 23:30', end: '10000-01-01 00:30', timezone: 'UTC' });
    expect(Object.keys(sent.body.errors)).toEqual(['end']);
    expect((await own.api.post('/api/events', { title: 'Last full hour', start: '9999-12-31 22:30', timezone: 'UTC' })).status).toBe(200);
  });

  it('validates title, start, end and calendar', async () => {
    const res = await team.api.post('/api/events', { start: 'soon', calendar: 'cal_unknown' });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ title: ['The title field is required.'], start: ['The start field must be a date: YYYY-MM-DD, YYYY-MM-DD HH:mm[:ss], or ISO 8601 such as 2026-07-14T13:00:00+02:00.'] });
    const badCal = await team.api.post('/api/events', { title: 'x', start: '2026-01-01 10:00', calendar: 'cal_AAAAAAAAAAAAAAAA' });
    expect(badCal.body.errors).toEqual({ calendar: ['The calendar field must be the id (cal_…) of one of your calendars.'] });
    const order = await team.api.post('/api/events', { title: 'x', start: '2026-01-01 10:00', end: '2026-01-01 09:00', timezone: 'UTC' });
    expect(order.body.errors).toEqual({ end: ['The end field must be a date after or equal to start.'] });
  });
});
