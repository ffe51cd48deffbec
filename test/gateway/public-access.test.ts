import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';

let gw: TestGateway;
let team: TestTeam;
let cal: { public_id: string; uid: string; public_url: string };

beforeAll(async () => {
  gw = await startGateway();
  team = await gw.newTeam();
  cal = (await team.api.post('/api/calendars', { name: 'Access', timezone: 'UTC' })).body.data;
});
afterAll(() => gw.close());

const event = { title: 'Private dinner', date_start: '2030-05-01 19:00', date_end: '2030-05-01 22:00', timezone: 'UTC' };
const KEYS = ['google', 'outlook_web', 'office365', 'yahoo', 'ics', 'apple', 'outlook', 'auto', 'embed'];

async function create(body: Record<string, unknown>) {
  const res = await team.api.post(`/api/calendars/${cal.public_id}/events`, body);
  expect(res.status).toBe(200);
  return res.body.data as { uid: string; public_id: string; public_url: string; is_protected: boolean };
}

const status = async (url: string, init: RequestInit = {}) => (await fetch(url, { redirect: 'manual', ...init })).status;
const feed = async () => fetch(`${cal.public_url}.ics`).then((r) => r.text());

describe('visibility', () => {
  it.each([
    ['a draft', async (e: { public_id: string }) => team.api.put(`/api/calendars/${cal.public_id}/events/${e.public_id}`, { ...event, is_draft: true })],
    ['a pending event', async (e: { public_id: string }) => gw.db('events').where({ uid: e.public_id.slice(4) }).update({ status: 'pending' })],
    ['a rejected event', async (e: { public_id: string }) => gw.db('events').where({ uid: e.public_id.slice(4) }).update({ status: 'rejected' })],
    ['a deleted event', async (e: { public_id: string }) => team.api.delete(`/api/events/${e.public_id}`)],
  ])('%s is 404 on every public path and absent from the feed', async (_name, hide) => {
    const e = await create({ ...event, title: `Hidden ${_name}` });
    expect(await status(e.public_url)).toBe(200);
    await hide(e);
    // state changed behind the API's back (pending/rejected) reaches the cache through the channel
    await gw.caches.invalidate({ kind: 'event', uid: e.uid }, { kind: 'calendar-events', id: (await gw.db('calendars').where({ uid: cal.uid }).first('id')).id });
    expect(await status(e.public_url)).toBe(404);
    for (const key of KEYS) expect(await status(`${e.public_url}/${key}`)).toBe(404);
    expect(await feed()).not.toContain(`Hidden ${_name}`);
    expect(await fetch(cal.public_url).then((r) => r.text())).not.toContain(`Hidden ${_name}`);
  });
});

describe('protected events', () => {
  it('answer 403 on every public path: a code page for browsers, JSON when asked', async () => {
    const e = await create({ ...event, access_code: 'sesame-42' });
    expect(e.is_protected).toBe(true);
    const page = await fetch(e.public_url);
    expect(page.status).toBe(403);
    const html = await page.text();
    expect(html).toContain(`action="/e/${e.uid}/unlock"`);
    expect(html).not.toContain('Private dinner');
    for (const key of KEYS) expect(await status(`${e.public_url}/${key}`)).toBe(403);
    const json = await gw.anon.get(`/e/${e.uid}`);
    expect(json.status).toBe(403);
    expect(json.body.message).toMatch(/protected/);
    expect(await feed()).not.toContain(e.uid);
  });

  it('the signed-URL endpoint follows spec §4.7', async () => {
    const plain = await create(event);
    const none = await team.api.post(`/api/calendars/${cal.public_id}/events/${plain.public_id}/signed-url`, {});
    expect(none.status).toBe(422);
    expect(none.body).toEqual({ error: expect.stringMatching(/no access code/) });

    const e = await create({ ...event, access_code: 'sesame-42' });
    const path = `/api/calendars/${cal.public_id}/events/${e.public_id}/signed-url`;
    for (const bad of [0, 366, 'x']) {
      const res = await team.api.post(path, { expiry_days: bad });
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual(['expiry_days']);
    }
    gw.clock.set('2030-01-01T00:00:00Z');
    const def = await team.api.post(path, {});
    expect(def.status).toBe(200);
    const url = new URL(def.body.url);
    expect(url.origin + url.pathname).toBe(e.public_url);
    expect(Number(url.searchParams.get('expires'))).toBe(Date.parse('2030-01-31T00:00:00Z') / 1000);
    expect(url.searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const week = await team.api.post(path, { expiry_days: 7 });
    expect(Number(new URL(week.body.url).searchParams.get('expires'))).toBe(Date.parse('2030-01-08T00:00:00Z') / 1000);
    const other = await gw.newTeam();
    expect((await other.api.post(path, {})).status).toBe(404);
    gw.clock.reset();
  });

  it('a signed pair opens the page and every platform link until it expires', async () => {
    const e = await create({ ...event, access_code: 'sesame-42' });
    gw.clock.set('2030-01-01T00:00:00Z');
    const signed = new URL((await team.api.post(`/api/calendars/${cal.public_id}/events/${e.public_id}/signed-url`, { expiry_days: 2 })).body.url);
    const query = signed.search;
    const page = await fetch(signed.href);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('private, no-store');
    const html = await page.text();
    expect(html).toContain('Private dinner');
    // the buttons carry the pair
    expect(html).toContain(`href="${e.public_url}/google${query.replace(/&/g, '&amp;')}"`);
    for (const key of KEYS) expect([200, 302]).toContain(await status(`${e.public_url}/${key}${query}`));

    const expires = signed.searchParams.get('expires') as string;
    const signature = signed.searchParams.get('signature') as string;
    const tampered = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;
    const redated = String(Number(expires) + 86400);
    expect(await status(`${e.public_url}?expires=${expires}&signature=${tampered}`)).toBe(403);
    expect(await status(`${e.public_url}?expires=${redated}&signature=${signature}`)).toBe(403);
    expect(await status(`${e.public_url}/google?expires=${expires}`)).toBe(403);
    // another event's signature does not open this one
    const other = await create({ ...event, access_code: 'other-code' });
    expect(await status(`${other.public_url}${query}`)).toBe(403);

    gw.clock.set('2030-01-02T23:59:59Z');
    expect(await status(signed.href)).toBe(200);
    gw.clock.set('2030-01-03T00:00:00Z');
    expect(await status(signed.href)).toBe(403);
    gw.clock.reset();
  });

  it('the right access code unlocks that browser with an HttpOnly cookie', async () => {
    const e = await create({ ...event, access_code: 'sesame-42' });
    const wrong = await fetch(`${e.public_url}/unlock`, { method: 'POST', body: new URLSearchParams({ access_code: 'nope' }), redirect: 'manual' });
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toContain('That access code is not right.');

    const right = await fetch(`${e.public_url}/unlock`, { method: 'POST', body: new URLSearchParams({ access_code: 'sesame-42' }), redirect: 'manual' });
    expect(right.status).toBe(303);
    expect(right.headers.get('location')).toBe(`/e/${e.uid}`);
    const cookie = right.headers.get('set-cookie') as string;
    expect(cookie).toMatch(new RegExp(`^unlock_${e.uid}=`));
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(new RegExp(`Path=/e/${e.uid}`));
    expect(cookie).toMatch(/SameSite=Lax/i);
    const jar = cookie.split(';')[0];
    expect(await status(e.public_url, { headers: { cookie: jar } })).toBe(200);
    expect(await status(`${e.public_url}/google`, { headers: { cookie: jar } })).toBe(302);
    // a forged cookie does not
    expect(await status(e.public_url, { headers: { cookie: `${jar.split('.')[0]}.forged-forged-forged` } })).toBe(403);
    // JSON clients
    const viaJson = await gw.anon.post(`/e/${e.uid}/unlock`, { access_code: 'sesame-42' });
    expect(viaJson.status).toBe(200);
    expect(viaJson.body).toEqual({ data: { unlocked: true } });
  });

  it('limits wrong codes per event and address', async () => {
    const e = await create({ ...event, access_code: 'sesame-42' });
    const attempt = (code: string) => gw.anon.post(`/e/${e.uid}/unlock`, { access_code: code });
    for (let i = 0; i < 5; i++) {
      const res = await attempt(`wrong-${i}`);
      expect(res.status).toBe(403);
      expect(res.headers.get('x-ratelimit-limit')).toBe('5');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(4 - i));
    }
    const blocked = await attempt('sesame-42');
    expect(blocked.status).toBe(429);
    expect(blocked.body).toEqual({ message: 'Too Many Attempts.' });
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(blocked.headers.get('x-ratelimit-remaining')).toBe('0');
    // another event is not affected
    const e2 = await create({ ...event, access_code: 'sesame-42' });
    expect((await gw.anon.post(`/e/${e2.uid}/unlock`, { access_code: 'sesame-42' })).status).toBe(200);
  });

  it('removing the code (access_code: null) makes the event public again', async () => {
    const e = await create({ ...event, access_code: 'sesame-42' });
    const updated = await team.api.put(`/api/calendars/${cal.public_id}/events/${e.public_id}`, { ...event, access_code: null });
    expect(updated.body.data.is_protected).toBe(false);
    expect(await status(e.public_url)).toBe(200);
  });
});

describe('calendar page and feed', () => {
  it('the page lists upcoming published events and subscribe buttons', async () => {
    const own = await gw.newTeam();
    const c = (await own.api.post('/api/calendars', { name: 'Team <events>', timezone: 'UTC', description: 'All our events' })).body.data;
    const upcoming = (await own.api.post(`/api/calendars/${c.public_id}/events`, { ...event, title: 'Upcoming talk' })).body.data;
    await own.api.post(`/api/calendars/${c.public_id}/events`, { ...event, title: 'Old talk', date_start: '2020-01-01 10:00', date_end: '2020-01-01 11:00' });
    await own.api.post(`/api/calendars/${c.public_id}/events`, { ...event, title: 'Draft talk', is_draft: true });
    const res = await fetch(c.public_url);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('Team &lt;events&gt;');
    expect(page).toContain('Upcoming talk');
    expect(page).toContain(`href="${upcoming.public_url}/google"`);
    expect(page).not.toContain('Old talk');
    expect(page).not.toContain('Draft talk');
    for (const platform of ['apple', 'google', 'outlook_web', 'office365', 'ics']) expect(page).toContain(`href="${c.public_url}/subscribe/${platform}"`);
    expect((await fetch(`${gw.baseUrl}/c/AAAAAAAAAAAAAAAA`)).status).toBe(404);
  });

  it('the feed holds every published event and answers conditional requests with 304', async () => {
    const own = await gw.newTeam();
    const c = (await own.api.post('/api/calendars', { name: 'Feed', timezone: 'UTC' })).body.data;
    const a = (await own.api.post(`/api/calendars/${c.public_id}/events`, { ...event, title: 'First' })).body.data;
    await own.api.post(`/api/calendars/${c.public_id}/events`, { ...event, title: 'Past one', date_start: '2020-01-01 10:00', date_end: '2020-01-01 11:00' });
    const url = `${c.public_url}.ics`;
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    const etag = res.headers.get('etag') as string;
    const lastModified = res.headers.get('last-modified') as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const body = await res.text();
    expect(body).toContain('X-WR-CALNAME:Feed');
    expect(body.match(/BEGIN:VEVENT/g)).toHaveLength(2);

    expect((await fetch(url, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    expect((await fetch(url, { headers: { 'If-Modified-Since': lastModified } })).status).toBe(304);

    // a change to an event changes the feed and its validator
    await own.api.put(`/api/calendars/${c.public_id}/events/${a.public_id}`, { ...event, title: 'First, renamed' });
    const after = await fetch(url, { headers: { 'If-None-Match': etag } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
    expect(await after.text()).toContain('SUMMARY:First\\, renamed');
    // a new event too
    await own.api.post(`/api/calendars/${c.public_id}/events`, { ...event, title: 'Second' });
    await waitFor(async () => (await fetch(url).then((r) => r.text())).includes('SUMMARY:Second'));
  });
});
