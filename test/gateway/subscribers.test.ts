import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';

let gw: TestGateway;
let team: TestTeam;

beforeAll(async () => {
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

const subscribeVia = (cal: { public_url: string }, platform: string, headers: Record<string, string> = BROWSER) =>
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
    const res = await subscribeVia(cal, platform);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toMatch(target);
    const list = (await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: expect.stringMatching(/^sub_/), platform, status: 'active', sync_count: 0, last_synced_at: null, name: null, email: null });
    expect(decodeURIComponent(res.headers.get('location') as string)).toContain(list[0].feed_url.replace(/^https?:\/\//, ''));
  });

  it('bots are sent to the public feed without being recorded; unknown platforms and calendars are 404', async () => {
    const cal = await calendarWithEvent();
    const bot = await subscribeVia(cal, 'ics', { 'User-Agent': 'Googlebot/2.1 (+http://www.google.com/bot.html)' });
    expect(bot.headers.get('location')).toBe(`${cal.public_url}.ics`);
    expect((await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data).toHaveLength(0);
    expect((await subscribeVia(cal, 'fax')).status).toBe(404);
    expect((await fetch(`${gw.baseUrl}/c/AAAAAAAAAAAAAAAA/subscribe/google`, { redirect: 'manual', headers: BROWSER })).status).toBe(404);
  });

  it('a calendar that asks takes a name and email first', async () => {
    const cal = await calendarWithEvent({ ask_subscriber_details: true });
    const form = await subscribeVia(cal, 'google');
    expect(form.status).toBe(200);
    const html = await form.text();
    expect(html).toContain(`action="/c/${cal.uid}/subscribe/google"`);
    const post = (body: Record<string, string>) => fetch(`${cal.public_url}/subscribe/google`, { method: 'POST', body: new URLSearchParams(body), redirect: 'manual', headers: BROWSER });
    const bad = await post({ name: '', email: 'not-an-email' });
    expect(bad.status).toBe(422);
    const badHtml = await bad.text();
    expect(badHtml).toContain('The name field is required.');
    expect(badHtml).toContain('The email field must be a valid email address.');
    expect((await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data).toHaveLength(0);
    const good = await post({ name: 'Ada <Lovelace>', email: 'ada@example.com' });
    expect(good.status).toBe(303);
    expect(good.headers.get('location')).toMatch(/^https:\/\/calendar\.google\.com\//);
    const list = (await team.api.get(`/api/calendars/${cal.public_id}/subscribers`)).body.data;
    expect(list).toEqual([expect.objectContaining({ name: 'Ada <Lovelace>', email: 'ada@example.com', platform: 'google' })]);
    const json = await gw.anon.post(`/c/${cal.uid}/subscribe/apple`, { name: 'x' });
    expect(json.status).toBe(422);
    expect(Object.keys(json.body.errors)).toEqual(['email']);
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
