import { emailedAnswerKey } from '../helpers/answer-keys';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { isolatedPrefix } from '../helpers/service-processes';

/**
 * The public surface against /docs.openapi, as a browser and a calendar app meet it: every
 * page, file, feed and redirect, in each state a visitor reaches, answers a status and a
 * media type the document lists for it (the API client checks each exchange). The JSON API
 * is checked the same way by every other test, through the same client.
 */
let gw: TestGateway;
let team: TestTeam;

beforeAll(async () => {
  // A queue of its own: an answer's key is read from the mail job that carries it.
  gw = await startGateway({ QUEUE_PREFIX: isolatedPrefix('openapi_public') });
  team = await gw.newTeam();
});
afterAll(() => gw.close());

const html = { Accept: 'text/html' };
const form = (fields: Record<string, string>) => ({ raw: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded', headers: html });

it('every public page, file, feed and redirect answers as the document says', async () => {
  const cal = (await team.api.post('/api/calendars', { name: 'Open', timezone: 'Europe/Berlin', short_link: `open-${Date.now().toString(36)}` })).body.data;
  const base = { date_start: '2031-03-10 18:00', date_end: '2031-03-10 20:00', timezone: 'Europe/Berlin' };
  const evt = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { ...base, title: 'Open evening', has_rsvp: true })).body.data;
  const locked = (await team.api.post(`/api/calendars/${cal.public_id}/events`, { ...base, title: 'Closed evening', access_code: 'let-me-in' })).body.data;
  const dk = (await team.api.post('/api/dynamic-links', { name: 'Docs' })).body.data;
  const { anon } = gw;
  const seen: Array<[string, number]> = [];
  const call = async (method: string, path: string, opts: Parameters<typeof anon.request>[2] = {}) => {
    const res = await anon.request(method, path, opts);
    seen.push([`${method} ${path.split('?')[0]}`, res.status]);
    return res;
  };

  // The event: its page, widget, files and platform links, as a page and as JSON errors.
  await call('GET', `/e/${evt.uid}`, { headers: html });
  await call('GET', `/e/${evt.uid}/embed`, { headers: html });
  for (const key of ['ics', 'apple', 'outlook', 'google', 'yahoo', 'outlook_web', 'office365', 'auto']) await call('GET', `/e/${evt.uid}/${key}`, { headers: html });
  await call('GET', `/e/${evt.uid}/no-such-platform`, { headers: html });
  await call('GET', '/e/AAAAAAAAAAAAAAAA', { headers: html });
  await call('GET', '/e/AAAAAAAAAAAAAAAA');
  // A protected event: locked, a wrong code, the right one.
  await call('GET', `/e/${locked.uid}`, { headers: html });
  await call('GET', `/e/${locked.uid}/ics`, { headers: html });
  await call('POST', `/e/${locked.uid}/unlock`, form({ access_code: 'wrong' }));
  await call('POST', `/e/${locked.uid}/unlock`, form({ access_code: 'let-me-in' }));
  await call('POST', `/e/${locked.uid}/unlock`, { body: { access_code: 'let-me-in' } });
  // RSVPs: a form answer, a JSON one, its answer link (the key as emailed), a change with the key, a bad one.
  await call('POST', `/e/${evt.uid}/rsvp`, form({ name: 'Ann', email: 'ann@example.com', answer: 'yes' }));
  await call('POST', `/e/${evt.uid}/rsvp`, { body: { name: 'Bo', email: 'bo@example.com', answer: 'maybe' } });
  const key = await emailedAnswerKey(gw, evt.uid, 'bo@example.com');
  await call('GET', `/e/${evt.uid}/rsvp?key=${key}`, { headers: html });
  await call('POST', `/e/${evt.uid}/rsvp`, { body: { name: 'Bo', email: 'bo@example.com', answer: 'yes', key } });
  await call('GET', `/e/${evt.uid}/rsvp?key=nonsense`, { headers: html });
  await call('POST', `/e/${evt.uid}/rsvp`, { body: { name: '', email: 'nope', answer: 'perhaps' } });

  // The calendar: page, feed (then revalidated), short link, subscribe links and a personal feed.
  await call('GET', `/c/${cal.uid}`, { headers: html });
  const feed = await call('GET', `/c/${cal.uid}.ics`, { headers: { Accept: 'text/calendar' } });
  await call('GET', `/c/${cal.uid}.ics`, { headers: { Accept: 'text/calendar', 'If-None-Match': feed.headers.get('etag') as string } });
  await call('GET', `/l/${cal.short_link}`, { headers: html });
  await call('GET', '/l/no-such-link', { headers: html });
  const browser = { ...html, 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/140.0 Safari/537.36' };
  await call('GET', `/c/${cal.uid}/subscribe/ics`, { headers: browser });
  const subscribed = await call('POST', `/c/${cal.uid}/subscribe/ics`, { headers: browser });
  const personal = new URL(subscribed.headers.get('location') as string, gw.baseUrl);
  await call('GET', personal.pathname, { headers: { Accept: 'text/calendar' } });
  await call('GET', `/c/${cal.uid}/feeds/not-a-token.ics`, { headers: { Accept: 'text/calendar' } });

  // Dynamic links: the page, and straight to a platform.
  const dyn = new URLSearchParams({ uid: dk.id, title: 'Pop-up', start: '2031-04-01 10:00', timezone: 'UTC' });
  await call('GET', `/api/dyn?${dyn}`, { headers: html });
  await call('GET', `/api/dyn?${dyn}&service=google`, { headers: html });

  // The service itself, and OPTIONS anywhere.
  for (const path of ['/healthz', '/readyz', '/robots.txt', '/docs', '/docs.openapi']) await call('GET', path);
  for (const path of [`/e/${evt.uid}`, `/c/${cal.uid}.ics`, '/api/calendars', `/e/${evt.uid}/rsvp`]) await call('OPTIONS', path);

  // Each state a visitor meets was among them.
  const statuses = new Set(seen.map(([, status]) => status));
  for (const status of [200, 202, 204, 302, 303, 304, 403, 404, 422]) expect([status, statuses.has(status)]).toEqual([status, true]);
});
