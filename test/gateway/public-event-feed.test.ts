import ical from 'node-ical';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { pythonIcalendarMissing, readWithPythonIcalendar } from '../helpers/ics-readers';

/**
 * "Get updates": an event's own feed (`/e/{uid}.ics`), which a calendar app subscribes to so
 * that the event's changes and its cancellation reach it. Read back by node-ical (and by
 * python-icalendar where it is installed) before and after each change.
 */
jest.setTimeout(60_000);

const PERSON = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

let gw: TestGateway;
let team: TestTeam;
let cal: { public_id: string; uid: string };

beforeAll(async () => {
  gw = await startGateway();
  team = await gw.newTeam();
  cal = (await team.api.post('/api/calendars', { name: 'Followed', timezone: 'Europe/Berlin' })).body.data;
});
afterAll(() => gw.close());

/** The feed after the change, for python-icalendar's reading below. */
let updatedFeed = { text: '', uid: '' };

const veventsOf = (text: string) => Object.values(ical.sync.parseICS(text)).filter((c) => c?.type === 'VEVENT') as ical.VEvent[];

async function fetchFeed(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers: { 'User-Agent': PERSON, ...headers } });
  return { res, text: await res.text() };
}

it('holds the event, follows its changes, answers 304 to a client that has it, and is empty once the event is deleted', async () => {
  const created = await team.api.post(`/api/calendars/${cal.public_id}/events`, {
    title: 'Product launch',
    date_start: '2031-09-17 18:30',
    date_end: '2031-09-17 21:00',
    timezone: 'Europe/Berlin',
    location: 'Kulturbrauerei',
  });
  const event = created.body.data as { uid: string; public_id: string; public_url: string };
  const feedUrl = `${event.public_url}.ics`;

  // The event page links it as webcal://, for calendar apps to subscribe to.
  const page = await fetch(event.public_url, { headers: { 'User-Agent': PERSON } }).then((r) => r.text());
  expect(page).toContain(`href="${feedUrl.replace(/^http:\/\//, 'webcal://')}"`);

  const first = await fetchFeed(feedUrl);
  expect(first.res.status).toBe(200);
  expect(first.res.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
  expect(first.res.headers.get('cache-control')).toBe('public, max-age=300');
  expect(first.text).toContain('REFRESH-INTERVAL;VALUE=DURATION:PT60M');
  const before = veventsOf(first.text);
  expect(before).toHaveLength(1);
  expect(before[0].summary).toBe('Product launch');
  expect(before[0].start.toISOString()).toBe('2031-09-17T16:30:00.000Z');
  const etag = first.res.headers.get('etag') as string;
  expect(etag).toMatch(/^"[\w-]+"$/);

  // A client that has it: 304, whichever encoding it had.
  const again = await fetch(feedUrl, { headers: { 'If-None-Match': etag, 'User-Agent': PERSON } });
  expect(again.status).toBe(304);
  const gz = await fetch(feedUrl, { headers: { 'Accept-Encoding': 'gzip', 'User-Agent': PERSON } });
  expect(gz.headers.get('content-encoding')).toBe('gzip');
  expect((await fetch(feedUrl, { headers: { 'If-None-Match': gz.headers.get('etag') as string } })).status).toBe(304);

  // Moved and renamed: the feed says so, under the same UID with a higher SEQUENCE.
  const updated = await team.api.put(`/api/calendars/${cal.public_id}/events/${event.public_id}`, { title: 'Product launch (new date)', date_start: '2031-09-24 18:30', date_end: '2031-09-24 21:00', timezone: 'Europe/Berlin' });
  expect([updated.status, updated.body]).toEqual([200, expect.anything()]);
  const second = await fetchFeed(feedUrl, { 'If-None-Match': etag });
  expect(second.res.status).toBe(200);
  const after = veventsOf(second.text);
  expect(after).toHaveLength(1);
  expect(after[0].uid).toBe(before[0].uid);
  expect(after[0].summary).toBe('Product launch (new date)');
  expect(after[0].start.toISOString()).toBe('2031-09-24T16:30:00.000Z');
  expect(Number(after[0].sequence)).toBeGreaterThan(Number(before[0].sequence));
  updatedFeed = { text: second.text, uid: before[0].uid };

  // Deleted: still a feed (a 404 would leave the last copy in the app), with no event in it.
  expect((await team.api.delete(`/api/calendars/${cal.public_id}/events/${event.public_id}`)).status).toBeLessThan(300);
  const third = await fetchFeed(feedUrl, { 'If-None-Match': second.res.headers.get('etag') as string });
  expect(third.res.status).toBe(200);
  expect(third.text).toContain('BEGIN:VCALENDAR');
  expect(veventsOf(third.text)).toEqual([]);
  expect(third.text).toContain('X-WR-CALNAME:Product launch (new date)');
  // The page is gone as before.
  expect((await fetch(event.public_url)).status).toBe(404);
});

const missing = pythonIcalendarMissing();
(missing ? it.skip : it)(missing ? `is read alike by python-icalendar (skipped: ${missing})` : 'is read alike by python-icalendar', () => {
  expect(readWithPythonIcalendar(updatedFeed.text).map((e) => [e.uid, new Date(e.startMs).toISOString()])).toEqual([[updatedFeed.uid, '2031-09-24T16:30:00.000Z']]);
});

it('is a 404 for an unknown event, and a 403 for a protected one without access', async () => {
  expect((await fetch(`${gw.baseUrl}/e/AAAAAAAAAAAAAAAA.ics`)).status).toBe(404);
  expect((await fetch(`${gw.baseUrl}/e/not-a-uid.ics`)).status).toBe(404);
  const locked = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Board dinner', date_start: '2031-05-01 19:00', date_end: '2031-05-01 22:00', timezone: 'UTC', access_code: 'open-sesame' })).body.data;
  expect((await fetch(`${locked.public_url}.ics`)).status).toBe(403);
  // Its page offers no feed to follow: it would need the signed pair, which expires.
  const signed = (await team.api.post(`/api/calendars/${cal.public_id}/events/${locked.public_id}/signed-url`, {})).body;
  const page = await fetch(signed.url).then((r) => r.text());
  expect(page).toContain('Board dinner');
  expect(page).not.toContain('.ics"');
});

it('counts each fetch as a feed fetch of the event', async () => {
  const counting = await startGateway();
  const event = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Counted', date_start: '2031-06-01 10:00', date_end: '2031-06-01 11:00', timezone: 'UTC' })).body.data;
  const url = `${counting.baseUrl}/e/${event.uid}.ics`;
  expect((await fetchFeed(url)).res.status).toBe(200);
  expect((await fetchFeed(url)).res.status).toBe(200);
  await counting.close();
  const res = await team.api.get(`/api/analytics?event=${event.public_id}&group_by=platform`);
  expect(res.body.data).toEqual([expect.objectContaining({ platform: 'event', feed_fetches: 2 })]);
});
