import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';
import { isolatedPrefix } from '../helpers/service-processes';

let gw: TestGateway;
let team: TestTeam;

beforeAll(async () => {
  // The per-address limit is tested on a gateway of its own (below): every test here subscribes from 127.0.0.1.
  gw = await startGateway();
  team = await gw.newTeam();
});
afterAll(() => gw.close());

const BROWSER = { 'User-Agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15' };

async function calendarWithEvent(opts: Record<string, unknown> = {}) {
  const cal = (await team.api.post('/api/calendars', { name: 'Meetups', timezone: 'UTC', ...opts })).body.data;
  await team.api.post(`/api/calendars/${cal.public_id}/events`, { title: 'Talk', date_start: '2030-01-01 18:00', date_end: '2030-01-01 19:00', timezone: 'UTC' });
  return cal as { public_id: string; uid: string; public_url: string };
}

/** The subscribe page's button: a POST, which records the subscriber. */
const subscribeVia = (cal: { public_url: string }, platform: string, headers: Record<string, string> = BROWSER) =>
  fetch(`${cal.public_url}/subscribe/${platform}`, { method: 'POST', redirect: 'manual', headers });
/** Opening the subscribe address (a click, a link preview, a mail scanner): shows the page. */
const openVia = (cal: { public_url: string }, platform: string, headers: Record<string, string> = BROWSER) =>
  fetch(`${cal.public_url}/subscribe/${platform}`, { redirect: 'manual', headers });

describe('subscribing', () => {
  it.each([
    ['apple', /^webcal:\/\/127\.0\.0\.1:\d+\/c\/\w{16}\/feeds\/\w{32}\.ics$/],
    ['google', /^https:\/\/calendar\.google\.com\/calendar\/render\?cid=webcal%3A%2F%2F127\.0\.0\.1/],
    ['outlook_web', /^https:\/\/outlook\.live\.com\/calendar\/0\/addfromweb\?url=http%3A%2F%2F127\.0\.0\.1.+&name=Meetups$/],
    ['office365', /^https:\/\/outlook\.cloud\.microsoft\/calendar\/0\/addfromweb\?url=http/],
    ['ics', /^http:\/\/127\.0\.0\.1:\d+\/c\/\w{16}\/feeds\/\w{32}\.ics$/],
  ])('%s: records a subscriber and sends the browser to the platform with a personal feed', async (platform, target) => {
    const cal = await calendarWithEvent();
    const page = await openVia(cal, platform);
    expect([page.status, await page.text()]).toEqual([200, expect.stringContaining(`<form method="post" action="/c/${cal.uid}/subscribe/${platform}">`)]);
    expect((await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data).toHaveLength(0);
    const res = await subscribeVia(cal, platform);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(target);
    const list = (await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: expect.stringMatching(/^sub_/), platform, status: 'active', sync_count: 0, last_synced_at: null, name: null, email: null });
    expect(decodeURIComponent(res.headers.get('location') as string)).toContain(list[0].feed_url.replace(/^https?:\/\//, ''));
  });

  it.each(['outlook_web', 'office365'])('%s: a long CJK calendar name is cut so the link stays under 2000 characters', async (platform) => {
    const name = Array.from({ length: 200 }, (_, i) => (i % 9 === 4 ? '📅' : '日历会议北京'[i % 6])).join('').slice(0, 255);
    const cal = await calendarWithEvent({ name });
    const res = await subscribeVia(cal, platform);
    const location = new URL(res.headers.get('location') as string);
    expect(location.href.length).toBeLessThanOrEqual(2000);
    const shown = location.searchParams.get('name') as string;
    expect(shown).toMatch(/…$/);
    expect(name.startsWith(shown.slice(0, -1))).toBe(true);
    expect(location.searchParams.get('url')).toMatch(/\/feeds\/\w{32}\.ics$/);
  });

  it('bots are sent to the public feed without being recorded; unknown platforms and calendars are 404', async () => {
    const cal = await calendarWithEvent();
    const bot = await openVia(cal, 'ics', { 'User-Agent': 'Googlebot/2.1 (+http://www.google.com/bot.html)' });
    expect(bot.headers.get('location')).toBe(`${cal.public_url}.ics`);
    expect((await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data).toHaveLength(0);
    expect((await openVia(cal, 'fax')).status).toBe(404);
    expect((await fetch(`${gw.baseUrl}/c/AAAAAAAAAAAAAAAA/subscribe/google`, { redirect: 'manual', headers: BROWSER })).status).toBe(404);
  });

  it('a calendar that asks takes a name and email first', async () => {
    const cal = await calendarWithEvent({ ask_subscriber_details: true });
    const form = await openVia(cal, 'google');
    expect(form.status).toBe(200);
    const html = await form.text();
    expect(html).toContain(`action="/c/${cal.uid}/subscribe/google"`);
    const post = (body: Record<string, string>) => fetch(`${cal.public_url}/subscribe/google`, { method: 'POST', body: new URLSearchParams(body), redirect: 'manual', headers: BROWSER });
    const bad = await post({ name: '', email: 'not-an-email' });
    expect(bad.status).toBe(422);
    const badHtml = await bad.text();
    expect(badHtml).toContain('<li id="name-error">Please enter your name (at most 255 characters).</li>');
    expect(badHtml).toContain('<li id="email-error">Please enter a valid email address.</li>');
    expect((await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data).toHaveLength(0);
    const good = await post({ name: 'Ada <Lovelace>', email: 'ada@example.com' });
    expect(good.status).toBe(303);
    expect(good.headers.get('location')).toMatch(/^https:\/\/calendar\.google\.com\//);
    const list = (await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data;
    expect(list).toEqual([expect.objectContaining({ name: 'Ada <Lovelace>', email: 'ada@example.com', platform: 'google' })]);
    const json = await gw.anon.post(`/c/${cal.uid}/subscribe/apple`, { name: 'x' });
    expect(json.status).toBe(422);
    expect(Object.keys(json.body.errors)).toEqual(['email']);
    // A name follows the invitees' rule: no control characters (no line breaks).
    const broken = await gw.anon.post(`/c/${cal.uid}/subscribe/apple`, { name: 'Ada\r\nBcc: x@evil.test', email: 'ada2@example.com' });
    expect(broken.status).toBe(422);
    expect(Object.keys(broken.body.errors)).toEqual(['name']);
  });

  it('the details form takes form-urlencoded or JSON: any other content type is a 415, not missing fields', async () => {
    const cal = await calendarWithEvent({ ask_subscriber_details: true });
    const path = `/c/${cal.uid}/subscribe/google`;
    const json = await gw.anon.request('POST', path, { raw: 'name=Ada&email=ada@example.com', contentType: 'text/plain' });
    expect(json.status).toBe(415);
    expect(json.body).toEqual({ message: 'Unsupported content type: send application/x-www-form-urlencoded or application/json.' });
    const multipart = new FormData();
    multipart.set('name', 'Ada');
    multipart.set('email', 'ada@example.com');
    for (const init of [{ body: multipart }, { body: 'name=Ada&email=ada@example.com', headers: { ...BROWSER, 'Content-Type': 'text/plain' } }]) {
      const page = await fetch(gw.baseUrl + path, { method: 'POST', redirect: 'manual', headers: BROWSER, ...init });
      expect(page.status).toBe(415);
      expect(page.headers.get('content-type')).toMatch(/text\/html/);
    }
    expect((await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data).toHaveLength(0);
  });
});

describe('the per-address limit', () => {
  it('records a few subscribers per address, then sends the visitor on with the public feed, recording nothing', async () => {
    const strict = await startGateway({ SUBSCRIBE_RATE_PER_10_MINUTES: '2', QUEUE_PREFIX: isolatedPrefix('sub_strict') });
    try {
      const own = await strict.newTeam();
      const make = async (opts: Record<string, unknown> = {}) =>
        (await own.api.post('/api/calendars', { name: 'Meetups', timezone: 'UTC', ...opts })).body.data as { public_id: string; uid: string; public_url: string };
      const cal = await make();
      const count = async (c: { public_id: string }) => (await own.api.get(`/api/calendars/${c.public_id}/subscribers`)).body.data.length;

      // Bots and the details form record nothing, so they are not counted.
      await openVia(cal, 'ics', { 'User-Agent': 'Googlebot/2.1 (+http://www.google.com/bot.html)' });
      await openVia(cal, 'ics');
      const first = await subscribeVia(cal, 'ics');
      expect(first.status).toBe(303);
      expect(first.headers.get('location')).toMatch(/\/feeds\/\w{32}\.ics$/);
      expect([first.headers.get('x-ratelimit-limit'), first.headers.get('x-ratelimit-remaining')]).toEqual(['2', '1']);
      expect((await subscribeVia(cal, 'google')).headers.get('x-ratelimit-remaining')).toBe('0');
      expect(await count(cal)).toBe(2);

      const over = await Promise.all([subscribeVia(cal, 'ics'), subscribeVia(cal, 'apple'), subscribeVia(cal, 'google')]);
      expect(over.map((r) => r.status)).toEqual([303, 303, 303]);
      expect(over[0].headers.get('location')).toBe(`${cal.public_url}.ics`);
      expect(over[1].headers.get('location')).toBe(`${cal.public_url.replace(/^http:/, 'webcal:')}.ics`);
      expect(decodeURIComponent(over[2].headers.get('location') as string)).toContain(`webcal://${cal.public_url.replace(/^http:\/\//, '')}.ics`);
      expect(over[0].headers.get('x-ratelimit-remaining')).toBe('0');
      expect(await count(cal)).toBe(2);

      // The limit is the address's, across calendars, and holds for the details form too.
      const asking = await make({ ask_subscriber_details: true });
      expect((await openVia(asking, 'google')).status).toBe(200);
      const sent = await fetch(`${asking.public_url}/subscribe/ics`, { method: 'POST', body: new URLSearchParams({ name: 'Ada', email: 'ada@example.com' }), redirect: 'manual', headers: BROWSER });
      expect(sent.status).toBe(303);
      expect(sent.headers.get('location')).toBe(`${asking.public_url}.ics`);
      expect(await count(asking)).toBe(0);
    } finally {
      await strict.close();
    }
  });
});

describe('behind a load balancer', () => {
  it('TRUST_PROXY=1 counts each client apart (the address the proxy forwards)', async () => {
    const proxied = await startGateway({ SUBSCRIBE_RATE_PER_10_MINUTES: '1', TRUST_PROXY: '1', QUEUE_PREFIX: isolatedPrefix('sub_proxy') });
    try {
      const own = await proxied.newTeam();
      const cal = (await own.api.post('/api/calendars', { name: 'Meetups', timezone: 'UTC' })).body.data;
      const from = (address: string) => subscribeVia(cal, 'ics', { ...BROWSER, 'X-Forwarded-For': address });
      expect((await from('203.0.113.1')).headers.get('location')).toMatch(/\/feeds\/\w{32}\.ics$/);
      expect((await from('203.0.113.1')).headers.get('location')).toBe(`${cal.public_url}.ics`);
      expect((await from('203.0.113.2')).headers.get('location')).toMatch(/\/feeds\/\w{32}\.ics$/);
      expect((await own.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data).toHaveLength(2);
      // However the proxy spells the client (a port, brackets), one client is one count:
      // an IPv4 address with any port, an IPv6 address in its /64 with or without brackets.
      const counted = async (spellings: string[]) => {
        const locations = [];
        for (const spelled of spellings) locations.push((await from(spelled)).headers.get('location') as string);
        return locations.map((l) => (/\/feeds\//.test(l) ? 'subscribed' : 'limited'));
      };
      expect(await counted(['198.51.100.7:41234', '198.51.100.7:41235', '198.51.100.7', '[::ffff:198.51.100.7]:443'])).toEqual(['subscribed', 'limited', 'limited', 'limited']);
      expect(await counted(['[2001:db8:5:6::1]:443', '2001:db8:5:6::1', '[2001:DB8:5:6::9]', '2001:db8:5:6:0:0:0:a'])).toEqual(['subscribed', 'limited', 'limited', 'limited']);
    } finally {
      await proxied.close();
    }
  });
});

describe('personal feeds', () => {
  it('serve the calendar, count every fetch (in batches) and answer 304s', async () => {
    const cal = await calendarWithEvent();
    await subscribeVia(cal, 'apple');
    const [sub] = (await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data;
    const first = await fetch(sub.feed_url);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    expect(await first.text()).toContain('SUMMARY:Talk');
    const etag = first.headers.get('etag') as string;
    expect((await fetch(sub.feed_url, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    await fetch(sub.feed_url);
    await waitFor(async () => (await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data[0].sync_count === 3, { what: 'three counted syncs' });
    expect((await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data[0].last_synced_at).toMatch(/Z$/);
    // a token of another calendar, or a made-up one, finds nothing
    const other = await calendarWithEvent();
    expect((await fetch(sub.feed_url.replace(cal.uid, other.uid))).status).toBe(404);
    expect((await fetch(`${cal.public_url}/feeds/${'A'.repeat(32)}.ics`)).status).toBe(404);
  });

  it('blocked subscribers get 410 until unblocked; removed ones 404', async () => {
    const cal = await calendarWithEvent();
    await subscribeVia(cal, 'google');
    await subscribeVia(cal, 'ics');
    const [a, b] = (await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data;
    expect((await fetch(a.feed_url)).status).toBe(200); // now cached
    const blocked = await team.api.put(`/api/calendars/${cal.public_id}/subscribers/${a.id}`, { status: 'blocked' });
    expect(blocked.body.data.status).toBe('blocked');
    const gone = await fetch(a.feed_url);
    expect(gone.status).toBe(410);
    expect((await fetch(b.feed_url)).status).toBe(200);
    expect((await team.api.get(`/api/calendars/${cal.public_id}/subscribers?status=blocked`)).body.data.map((s: { id: string }) => s.id)).toEqual([a.id]);
    expect((await team.api.get(`/api/calendars/${cal.public_id}/subscribers?platform=ics`)).body.data.map((s: { id: string }) => s.id)).toEqual([b.id]);
    await team.api.put(`/api/calendars/${cal.public_id}/subscribers/${a.id}`, { status: 'active' });
    expect((await fetch(a.feed_url)).status).toBe(200);
    expect((await team.api.delete(`/api/calendars/${cal.public_id}/subscribers/${b.id}`)).body).toEqual({ data: { id: b.id, deleted: true } });
    expect((await fetch(b.feed_url)).status).toBe(404);
  });

  it('pages through subscribers and keeps them to their team', async () => {
    const cal = await calendarWithEvent();
    for (let i = 0; i < 5; i++) await subscribeVia(cal, 'ics');
    const p1 = await team.api.get(`/api/calendars/${cal.public_id}/subscribers?per_page=3`);
    const p2 = await team.api.get(`/api/calendars/${cal.public_id}/subscribers?per_page=3&cursor=${p1.body.meta.next_cursor}`);
    expect(p1.body.data).toHaveLength(3);
    expect(p2.body.data).toHaveLength(2);
    expect(p2.body.meta.next_cursor).toBeNull();
    const other = await gw.newTeam();
    const sub = p1.body.data[0].id;
    expect((await other.api.get(`/api/calendars/${cal.public_id}/subscribers`)).status).toBe(404);
    expect((await other.api.put(`/api/calendars/${cal.public_id}/subscribers/${sub}`, { status: 'blocked' })).status).toBe(404);
    expect((await other.api.delete(`/api/calendars/${cal.public_id}/subscribers/${sub}`)).status).toBe(404);
    expect((await team.api.put(`/api/calendars/${cal.public_id}/subscribers/${sub}`, { status: 'gone' })).status).toBe(422);
  });
});
