import ical from 'node-ical';
import { fromAddEventDate } from '../../services/gateway/dynamic-links/addevent-dates';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';

let gw: TestGateway;
let team: TestTeam;
let key: string;

beforeAll(async () => {
  gw = await startGateway();
  team = await gw.newTeam();
  key = (await team.api.post('/api/dynamic-links', { name: 'Newsletter' })).body.data.id;
});
afterAll(() => gw.close());

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

describe('dynamic-link keys', () => {
  it('creates, lists, gets and deletes keys, team-scoped', async () => {
    const created = await team.api.post('/api/dynamic-links', { name: 'Site' });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ id: expect.stringMatching(/^dk_[0-9A-Za-z]{16}$/), name: 'Site', uses: 0, last_used_at: null });
    const id = created.body.data.id;
    expect((await team.api.get('/api/dynamic-links')).body.data.map((d: { id: string }) => d.id)).toContain(id);
    expect((await team.api.get(`/api/dynamic-links/${id}`)).body.data.id).toBe(id);
    const other = await gw.newTeam();
    expect((await other.api.get(`/api/dynamic-links/${id}`)).status).toBe(404);
    expect((await other.api.delete(`/api/dynamic-links/${id}`)).status).toBe(404);
    expect((await team.api.delete(`/api/dynamic-links/${id}`)).body).toEqual({ data: { id, deleted: true } });
    expect((await team.api.get(`/api/dynamic-links/${id}`)).status).toBe(404);
    const page = await fetch(`${gw.baseUrl}/api/dyn?${q({ uid: id, title: 'x', start: '2030-01-01 10:00' })}`);
    expect(page.status).toBe(404);
  });
});

describe('/api/dyn', () => {
  const params = () => ({
    uid: key,
    title: 'Webinar <live>',
    start: '2026-07-14 13:00',
    duration: '90',
    timezone: 'America/New_York',
    description: 'Join us',
    location: 'Online',
  });

  it('renders the add-to-calendar page with a button per platform', async () => {
    const res = await fetch(`${gw.baseUrl}/api/dyn?${q(params())}`);
    expect(res.status).toBe(200);
    // Its content is the query's: kept out of search engines.
    expect(res.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    const page = await res.text();
    expect(page).toContain('Webinar &lt;live&gt;');
    expect(page).toContain('Tue Jul 14, 2026 1:00 PM - 2:30 PM (EDT)');
    // One control, its platforms in the usual order (fetch's User-Agent suggests none).
    const hrefs = [...page.matchAll(/href="([^"]*service=[^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
    expect(hrefs.map((h) => new URL(h).searchParams.get('service'))).toEqual(['apple', 'google', 'outlook', 'office365', 'outlook_web', 'yahoo', 'ics']);
  });

  it('goes straight to a platform with service', async () => {
    const google = await fetch(`${gw.baseUrl}/api/dyn?${q({ ...params(), service: 'google' })}`, { redirect: 'manual' });
    expect(google.status).toBe(302);
    const url = new URL(google.headers.get('location') as string);
    expect(url.searchParams.get('dates')).toBe('20260714T130000/20260714T143000');
    expect(url.searchParams.get('ctz')).toBe('America/New_York');
    const icsRes = await fetch(`${gw.baseUrl}/api/dyn?${q({ ...params(), service: 'ics', recurring: 'FREQ=DAILY;COUNT=3', alarm: '15' })}`);
    expect(icsRes.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    const text = await icsRes.text();
    expect(text).toContain('RRULE:FREQ=DAILY;COUNT=3');
    expect(text).toContain('TRIGGER:-PT15M');
    const [e] = Object.values(ical.sync.parseICS(text)).filter((c) => c?.type === 'VEVENT') as ical.VEvent[];
    expect(e.start.toISOString()).toBe('2026-07-14T17:00:00.000Z');
    expect(e.end?.toISOString()).toBe('2026-07-14T18:30:00.000Z');
    // the same values give the same UID on every download
    expect(await fetch(`${gw.baseUrl}/api/dyn?${q({ ...params(), service: 'ics', recurring: 'FREQ=DAILY;COUNT=3', alarm: '15' })}`).then((r) => r.text())).toContain(`UID:${e.uid}`);
  });

  it('makes all-day events from a bare date', async () => {
    const res = await fetch(`${gw.baseUrl}/api/dyn?${q({ uid: key, title: 'Holiday', start: '2026-12-24', end: '2026-12-26', service: 'google' })}`, { redirect: 'manual' });
    expect(new URL(res.headers.get('location') as string).searchParams.get('dates')).toBe('20261224/20261227');
    // A duration counts in whole days (at least one) and wins over end, as on smart links.
    const days = async (extra: Record<string, string>) => {
      const r = await fetch(`${gw.baseUrl}/api/dyn?${q({ uid: key, title: 'Holiday', start: '2026-12-24', service: 'google', ...extra })}`, { redirect: 'manual' });
      return new URL(r.headers.get('location') as string).searchParams.get('dates');
    };
    expect(await days({ duration: '2880' })).toBe('20261224/20261226');
    expect(await days({ duration: '30', end: '2026-12-30' })).toBe('20261224/20261225');
  });

  it("writes a rule's UNTIL as RFC 5545 wants it beside the start, as stored events do", async () => {
    const timed = await fetch(`${gw.baseUrl}/api/dyn?${q({ ...params(), service: 'ics', recurring: 'FREQ=DAILY;UNTIL=20260720' })}`).then((r) => r.text());
    expect(timed).toContain('RRULE:FREQ=DAILY;UNTIL=20260721T035959Z');
    const allDay = await fetch(`${gw.baseUrl}/api/dyn?${q({ uid: key, title: 'Holiday', start: '2026-12-24', service: 'ics', recurring: 'FREQ=YEARLY;UNTIL=20301224T000000Z' })}`).then((r) => r.text());
    expect(allDay).toContain('RRULE:FREQ=YEARLY;UNTIL=20301224');
    expect(allDay).not.toContain('UNTIL=20301224T');
  });

  it('answers bad values with 422: a page for browsers, JSON when asked', async () => {
    const bad = q({ uid: key, title: 'x', start: 'someday', timezone: 'Mars/Base', service: 'fax' });
    const page = await fetch(`${gw.baseUrl}/api/dyn?${bad}`, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(422);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    for (const message of ['The start field must be a date: YYYY-MM-DD, YYYY-MM-DD HH:mm[:ss], or ISO 8601 such as 2026-07-14T13:00:00+02:00.', 'The timezone field must be an IANA time zone name, such as Europe/Berlin, America/New_York or UTC.', 'The service field must be one of: google, apple, outlook, outlook_web, office365, yahoo, ics.']) expect(html).toContain(message);
    const json = await gw.anon.get(`/api/dyn?${bad}`);
    expect(json.status).toBe(422);
    expect(Object.keys(json.body.errors).sort()).toEqual(['service', 'start', 'timezone']);
    const order = await gw.anon.get(`/api/dyn?${q({ uid: key, title: 'x', start: '2026-01-02 10:00', end: '2026-01-01 10:00' })}`);
    expect(order.body.errors).toEqual({ end: ['The end field must be a date after or equal to start.'] });
    const unknown = await gw.anon.get(`/api/dyn?${q({ uid: 'dk_AAAAAAAAAAAAAAAA', title: 'x', start: '2026-01-01' })}`);
    expect(unknown.status).toBe(404);
  });

  it('counts uses per key', async () => {
    const own = (await team.api.post('/api/dynamic-links', { name: 'Counted' })).body.data.id;
    for (let i = 0; i < 3; i++) await fetch(`${gw.baseUrl}/api/dyn?${q({ uid: own, title: 'x', start: '2026-01-01', service: 'google' })}`, { redirect: 'manual' });
    await fetch(`${gw.baseUrl}/api/dyn?${q({ uid: own, title: 'x', start: '2026-01-01' })}`);
    await waitFor(async () => (await team.api.get(`/api/dynamic-links/${own}`)).body.data.uses === 4, { what: 'the counted uses' });
    expect((await team.api.get(`/api/dynamic-links/${own}`)).body.data.last_used_at).not.toBeNull();
  });
});

describe('/api/dyn_ade (AddEvent parameter names)', () => {
  it.each([
    ['google', 302],
    ['outlookcom', 302],
    ['office365', 302],
    ['yahoo', 302],
    ['outlook', 200],
    ['apple', 200],
    ['stream', 200],
  ])('service=%s', async (service, expected) => {
    const res = await fetch(
      `${gw.baseUrl}/api/dyn_ade?${q({ client: key, title: 'Launch', start: '05/08/2026 09:00 AM', end: '05/08/2026 10:30 AM', timezone: 'Europe/London', service })}`,
      { redirect: 'manual' },
    );
    expect(res.status).toBe(expected);
    if (service === 'google') expect(new URL(res.headers.get('location') as string).searchParams.get('dates')).toBe('20260508T090000/20260508T103000');
    if (service === 'outlookcom') expect(new URL(res.headers.get('location') as string).hostname).toBe('outlook.live.com');
  });

  it('reads day-first dates with date_format=DD/MM/YYYY, and all-day events', async () => {
    const res = await fetch(
      `${gw.baseUrl}/api/dyn_ade?${q({ client: key, title: 'x', start: '05/08/2026 18:00', date_format: 'DD/MM/YYYY', timezone: 'UTC', service: 'yahoo' })}`,
      { redirect: 'manual' },
    );
    expect(new URL(res.headers.get('location') as string).searchParams.get('ST')).toBe('20260805T180000');
    const allDay = await fetch(`${gw.baseUrl}/api/dyn_ade?${q({ client: key, title: 'x', start: '12/24/2026', all_day_event: 'true', service: 'google' })}`, { redirect: 'manual' });
    expect(new URL(allDay.headers.get('location') as string).searchParams.get('dates')).toBe('20261224/20261225');
  });

  it('rejects dates it cannot read', async () => {
    const res = await gw.anon.get(`/api/dyn_ade?${q({ client: key, title: 'x', start: '13/45/2026 25:00' })}`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toHaveProperty('start');
  });

  it('reads AddEvent dates', () => {
    expect(fromAddEventDate('05/08/2026 09:00 AM')).toBe('2026-05-08 09:00:00');
    expect(fromAddEventDate('05/08/2026 12:30 pm')).toBe('2026-05-08 12:30:00');
    expect(fromAddEventDate('05/08/2026 12:00 AM')).toBe('2026-05-08 00:00:00');
    expect(fromAddEventDate('5/8/2026 17:45')).toBe('2026-05-08 17:45:00');
    expect(fromAddEventDate('05/08/2026', 'DD/MM/YYYY')).toBe('2026-08-05');
    expect(fromAddEventDate('2026-05-08T09:00:00Z')).toBe('2026-05-08T09:00:00Z');
    expect(fromAddEventDate('13:00 tomorrow')).toBeNull();
    expect(fromAddEventDate('05/08/2026 13:00 PM')).toBeNull();
  });
});
