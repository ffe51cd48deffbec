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
    const slug = `hidden-${_name.split(' ').pop()}-${Date.now()}`;
    const e = await create({ ...event, title: `Hidden ${_name}`, short_link: slug });
    expect(await status(e.public_url)).toBe(200);
    expect(await status(`${gw.baseUrl}/l/${slug}`)).toBe(302);
    await hide(e);
    // state changed behind the API's back (pending/rejected) reaches the cache through the channel
    await gw.caches.invalidate({ kind: 'event', uid: e.uid }, { kind: 'calendar-events', id: (await gw.db('calendars').where({ uid: cal.uid }).first('id')).id });
    expect(await status(e.public_url)).toBe(404);
    for (const key of KEYS) expect(await status(`${e.public_url}/${key}`)).toBe(404);
    // its short link answers exactly as an unknown one: neither the uid nor that it exists
    const unknown = await fetch(`${gw.baseUrl}/l/no-such-link-here`).then((r) => r.text());
    const short = await fetch(`${gw.baseUrl}/l/${slug}`, { redirect: 'manual' });
    expect(short.status).toBe(404);
    expect(short.headers.get('location')).toBeNull();
    expect(await short.text()).toBe(unknown);
    expect((await gw.anon.get(`/l/${slug}`)).body).toEqual({ message: 'Link not found.' });
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

  it('their short link answers the same 403 unless it carries a valid signed pair', async () => {
    const slug = `protected-${Date.now()}`;
    const e = await create({ ...event, access_code: 'sesame-42', short_link: slug });
    const page = await fetch(`${gw.baseUrl}/l/${slug}`, { redirect: 'manual' });
    expect(page.status).toBe(403);
    expect(page.headers.get('location')).toBeNull();
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).toBe(await fetch(e.public_url).then((r) => r.text()));
    expect(html).not.toContain('Private dinner');
    const json = await gw.anon.get(`/l/${slug}`);
    expect(json.status).toBe(403);
    expect(json.body).toEqual((await gw.anon.get(`/e/${e.uid}`)).body);

    const signed = new URL((await team.api.post(`/api/calendars/${cal.public_id}/events/${e.public_id}/signed-url`, {})).body.url);
    const through = await fetch(`${gw.baseUrl}/l/${slug}${signed.search}`, { redirect: 'manual' });
    expect(through.status).toBe(302);
    expect(through.headers.get('location')).toBe(signed.href);
    expect(through.headers.get('cache-control')).toBe('private, no-store');
    expect(await status(signed.href)).toBe(200);
    // a pair that does not open this event opens nothing
    const expires = signed.searchParams.get('expires') as string;
    expect(await status(`${gw.baseUrl}/l/${slug}?expires=${expires}&signature=${'A'.repeat(43)}`)).toBe(403);
  });

  it('the signed-URL endpoint answers as documented', async () => {
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
    // the widget's title link carries the pair too, so it opens the page
    const embed = await fetch(`${e.public_url}/embed${query}`).then((r) => r.text());
    const titleHref = (/<h2><a href="([^"]+)"/.exec(embed) as RegExpExecArray)[1].replace(/&amp;/g, '&');
    expect(titleHref).toBe(`${e.public_url}${query}`);
    expect(await status(titleHref)).toBe(200);

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

  it('checks no more than five guesses of a burst, and refuses a right code sent past the fifth', async () => {
    const e = await create({ ...event, access_code: 'sesame-42' });
    const attempt = (code: string) => gw.anon.post(`/e/${e.uid}/unlock`, { access_code: code });
    let firstRefusal = () => undefined as void;
    const refused = new Promise<void>((resolve) => {
      firstRefusal = resolve;
    });
    const burst = Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        attempt(`wrong-${i}`).then((res) => {
          if (res.status === 429) firstRefusal();
          return res;
        }),
      ),
    );
    // A 429 means five attempts are taken, whether or not their checks have ended yet.
    await Promise.race([refused, burst]);
    const right = await attempt('sesame-42');
    expect(right.status).toBe(429);
    expect(right.body).toEqual({ message: 'Too Many Attempts.' });
    expect(right.headers.get('set-cookie')).toBeNull();
    expect([right.headers.get('x-ratelimit-limit'), right.headers.get('x-ratelimit-remaining')]).toEqual(['5', '0']);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    const statuses = (await burst).map((res) => res.status);
    expect(statuses.filter((s) => s === 403)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(45);
    expect((await attempt('sesame-42')).status).toBe(429);
  });

  it('a right code gives its attempt back', async () => {
    const e = await create({ ...event, access_code: 'sesame-42' });
    const attempt = (code: string) => gw.anon.post(`/e/${e.uid}/unlock`, { access_code: code });
    for (let i = 0; i < 4; i++) expect((await attempt(`wrong-${i}`)).status).toBe(403);
    expect((await attempt('sesame-42')).status).toBe(200);
    const wrong = await attempt('wrong-4');
    expect(wrong.status).toBe(403);
    expect(wrong.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await attempt('sesame-42')).status).toBe(429);
  });

  it('a request without a code is a 422 and one in another content type a 415, neither counted as a wrong code', async () => {
    const e = await create({ ...event, access_code: 'sesame-42' });
    const url = `${e.public_url}/unlock`;
    const json = { 'Content-Type': 'application/json', Accept: 'application/json' };
    for (const init of [{}, { headers: json, body: '{}' }, { headers: json, body: '{"access_code":""}' }, { body: new URLSearchParams({ access_code: '' }) }] as RequestInit[]) {
      const res = await fetch(url, { method: 'POST', redirect: 'manual', ...init });
      expect(res.status).toBe(422);
      expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
    }
    const viaJson = await gw.anon.post(`/e/${e.uid}/unlock`, {});
    expect(viaJson.status).toBe(422);
    expect(viaJson.body).toEqual({ message: 'The access code field is required.', errors: { access_code: ['The access code field is required.'] } });
    // a browser gets the code form again, saying what is missing
    const page = await fetch(url, { method: 'POST', body: new URLSearchParams({}), redirect: 'manual' });
    expect(page.status).toBe(422);
    const html = await page.text();
    expect(html).toContain(`action="/e/${e.uid}/unlock"`);
    expect(html).toContain('Please enter the access code you were given.');

    for (const [type, body] of [['text/plain', 'access_code=nope'], ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="access_code"\r\n\r\nnope\r\n--x--\r\n']]) {
      const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': type, Accept: 'application/json' }, body, redirect: 'manual' });
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual({ message: expect.stringMatching(/^Unsupported content type/) });
    }
    const asPage = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'sesame-42', redirect: 'manual' });
    expect(asPage.status).toBe(415);
    expect(asPage.headers.get('content-type')).toMatch(/text\/html/);

    // none of those counted: five wrong codes are still allowed
    const wrong = await gw.anon.post(`/e/${e.uid}/unlock`, { access_code: 'nope' });
    expect(wrong.status).toBe(403);
    expect(wrong.headers.get('x-ratelimit-remaining')).toBe('4');
  });

  it('a new code revokes every signed URL and unlock made before it; the same code sent again revokes nothing', async () => {
    const e = await create({ ...event, access_code: 'sesame-42' });
    const path = `/api/calendars/${cal.public_id}/events/${e.public_id}`;
    const signed = async () => {
      const res = await team.api.post(`${path}/signed-url`, {});
      expect(res.status).toBe(200);
      return new URL(res.body.url).search;
    };
    const unlocked = async (code: string) => {
      const res = await fetch(`${e.public_url}/unlock`, { method: 'POST', body: new URLSearchParams({ access_code: code }), redirect: 'manual' });
      expect(res.status).toBe(303);
      return (res.headers.get('set-cookie') as string).split(';')[0];
    };
    const opens = async (access: { query?: string; cookie?: string }) => {
      const init = access.cookie ? { headers: { cookie: access.cookie } } : {};
      return [await status(`${e.public_url}${access.query ?? ''}`, init), await status(`${e.public_url}/ics${access.query ?? ''}`, init)];
    };
    const old = { query: await signed(), cookie: await unlocked('sesame-42') };
    expect(await opens({ query: old.query })).toEqual([200, 200]);
    expect(await opens({ cookie: old.cookie })).toEqual([200, 200]);

    expect((await team.api.put(path, { ...event, access_code: 'sesame-42' })).status).toBe(200);
    expect(await opens({ query: old.query })).toEqual([200, 200]);
    expect(await opens({ cookie: old.cookie })).toEqual([200, 200]);

    const changed = await team.api.put(path, { ...event, access_code: 'newcode99' });
    expect(changed.status).toBe(200);
    expect(changed.body.data.is_protected).toBe(true);
    expect(await opens({ query: old.query })).toEqual([403, 403]);
    expect(await opens({ cookie: old.cookie })).toEqual([403, 403]);
    expect((await gw.anon.get(`/e/${e.uid}${old.query}`)).body.message).toMatch(/protected/);
    expect((await gw.anon.post(`/e/${e.uid}/unlock`, { access_code: 'sesame-42' })).status).toBe(403);

    const fresh = { query: await signed(), cookie: await unlocked('newcode99') };
    expect(await opens({ query: fresh.query })).toEqual([200, 200]);
    expect(await opens({ cookie: fresh.cookie })).toEqual([200, 200]);
  });

  it('removing the code (access_code: null) makes the event public again', async () => {
    const e = await create({ ...event, access_code: 'sesame-42' });
    const updated = await team.api.put(`/api/calendars/${cal.public_id}/events/${e.public_id}`, { ...event, access_code: null });
    expect(updated.body.data.is_protected).toBe(false);
    expect(await status(e.public_url)).toBe(200);
  });
});

describe('unlock limits across addresses (behind one proxy, as deployed)', () => {
  let proxied: TestGateway;
  let owner: TestTeam;
  let calendar: { public_id: string };
  beforeAll(async () => {
    // As infra/k8s/config.yaml sets it: the client is the address the one proxy saw.
    proxied = await startGateway({ TRUST_PROXY: '1' });
    owner = await proxied.newTeam();
    calendar = (await owner.api.post('/api/calendars', { name: 'Proxied', timezone: 'UTC' })).body.data;
  });
  afterAll(() => proxied.close());

  const protectedEvent = async () =>
    (await owner.api.post(`/api/calendars/${calendar.public_id}/events`, { ...event, access_code: 'sesame-42' })).body.data as { uid: string; public_id: string };
  const unlock = (uid: string, code: string, from: string) => proxied.anon.post(`/e/${uid}/unlock`, { access_code: code }, { headers: { 'X-Forwarded-For': from } });

  it('counts an IPv6 address as its /64', async () => {
    const e = await protectedEvent();
    for (let i = 1; i <= 5; i++) expect((await unlock(e.uid, `wrong-${i}`, `2001:db8:1:2::${i}`)).status).toBe(403);
    expect((await unlock(e.uid, 'sesame-42', '2001:db8:1:2:ffff:ffff:ffff:ffff')).status).toBe(429);
    expect((await unlock(e.uid, 'sesame-42', '2001:db8:1:3::1')).status).toBe(200);
  });

  it('caps wrong codes per event from all addresses together, also when they come at once; a new code starts afresh', async () => {
    const e = await protectedEvent();
    // 30 addresses, five guesses each: none is over its own limit, together they pass the event's 100.
    const burst = await Promise.all(Array.from({ length: 150 }, (_, i) => unlock(e.uid, `wrong-${i}`, `198.51.100.${Math.floor(i / 5)}`)));
    expect(burst.filter((res) => res.status === 403)).toHaveLength(100);
    const refused = burst.filter((res) => res.status === 429);
    expect(refused).toHaveLength(50);
    expect(new Set(refused.map((res) => res.headers.get('x-ratelimit-limit')))).toEqual(new Set(['100']));
    // an address that never guessed, with the right code, waits like everyone else
    const right = await unlock(e.uid, 'sesame-42', '203.0.113.1');
    expect(right.status).toBe(429);
    expect(right.body).toEqual({ message: 'Too Many Attempts.' });
    expect([right.headers.get('x-ratelimit-limit'), right.headers.get('x-ratelimit-remaining')]).toEqual(['100', '0']);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    // other events are not affected
    expect((await unlock((await protectedEvent()).uid, 'sesame-42', '203.0.113.1')).status).toBe(200);
    // guesses at the old code say nothing about a new one: its count starts afresh
    await owner.api.put(`/api/calendars/${calendar.public_id}/events/${e.public_id}`, { ...event, access_code: 'new-code-77' });
    expect((await unlock(e.uid, 'new-code-77', '203.0.113.2')).status).toBe(200);
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

  it("a deleted calendar's short link is 404", async () => {
    const own = await gw.newTeam();
    const slug = `gone-cal-${Date.now()}`;
    const c = (await own.api.post('/api/calendars', { name: 'Soon gone', timezone: 'UTC', short_link: slug })).body.data;
    expect((await fetch(`${gw.baseUrl}/l/${slug}`, { redirect: 'manual' })).headers.get('location')).toBe(c.public_url);
    expect((await own.api.delete(`/api/calendars/${c.public_id}`)).status).toBe(200);
    const gone = await fetch(`${gw.baseUrl}/l/${slug}`, { redirect: 'manual' });
    expect(gone.status).toBe(404);
    expect(gone.headers.get('location')).toBeNull();
  });

  it('the feed holds the published events of its window and answers conditional requests with 304', async () => {
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
    // An event that ended years ago is past the feed's window (30 days by default).
    expect(body.match(/BEGIN:VEVENT/g)).toHaveLength(1);
    expect(body).toContain('SUMMARY:First');

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

    // An event leaving the feed moves Last-Modified too, for apps that only send
    // If-Modified-Since (HTTP dates are whole seconds: the change comes in a later one).
    const since = (await fetch(url)).headers.get('last-modified') as string;
    await waitFor(() => Date.now() >= Date.parse(since) + 1000);
    await own.api.delete(`/api/events/${a.public_id}`);
    await waitFor(async () => (await fetch(url, { headers: { 'If-Modified-Since': since } })).status === 200);
    const gone = await fetch(url, { headers: { 'If-Modified-Since': since } });
    expect(Date.parse(gone.headers.get('last-modified') as string)).toBeGreaterThan(Date.parse(since));
    expect(await gone.text()).not.toContain('First\\, renamed');
  });
});
