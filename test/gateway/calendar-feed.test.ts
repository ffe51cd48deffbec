import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { readWithIcalJs } from '../helpers/ics-readers';
import { isolatedPrefix } from '../helpers/service-processes';

/**
 * A calendar's feed holds a bounded window: what is going on or to come, and what ended in
 * the last feed_past_days days, at most feed_max_events (upcoming first). It is sent
 * compressed as the client asks, and cold requests that arrive together share one build.
 * What the feed holds is read with ical.js and curl, not with our code.
 */
const TOKEN = 'metrics-token-feed-0123456789';
let gw: TestGateway;
let team: TestTeam;
beforeAll(async () => {
  gw = await startGateway({ METRICS_TOKEN: TOKEN, QUEUE_PREFIX: isolatedPrefix('calendar_feed') });
  team = await gw.newTeam();
});
afterAll(() => gw.close());

const DAY = 86_400_000;
/** A wall time in UTC, `days` from now (fractions allowed), as the API takes it. */
const at = (days: number) => new Date(Date.now() + days * DAY).toISOString().slice(0, 16).replace('T', ' ');

async function calendar(settings: Record<string, unknown> = {}) {
  const res = await team.api.post('/api/calendars', { name: 'Feed window', timezone: 'UTC', ...settings });
  expect(res.status).toBe(200);
  return res.body.data as { public_id: string; uid: string; feed_past_days: number | null; feed_max_events: number | null };
}

async function event(cal: { public_id: string }, title: string, start: number, end: number, extra: Record<string, unknown> = {}) {
  const res = await team.api.post(`/api/calendars/${cal.public_id}/events`, { title, date_start: at(start), date_end: at(end), timezone: 'UTC', ...extra });
  expect(res.status).toBe(200);
  return res.body.data.uid as string;
}

/** The raw answer: status, headers and body bytes as sent (no decoding). */
function raw(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(`${gw.baseUrl}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

/** The SUMMARY of each VEVENT of a feed, sorted. */
const summaries = (text: string) =>
  text
    .split('\r\n')
    .filter((l) => l.startsWith('SUMMARY:'))
    .map((l) => l.slice('SUMMARY:'.length))
    .sort();

async function feedText(uid: string): Promise<string> {
  const res = await raw(`/c/${uid}.ics`);
  expect(res.status).toBe(200);
  return res.body.toString('utf8');
}

describe('the window', () => {
  it('holds what goes on or comes, and the past days asked for; not older events nor ended series', async () => {
    const cal = await calendar();
    expect([cal.feed_past_days, cal.feed_max_events]).toEqual([null, null]);
    await event(cal, 'Long ago', -100, -99.9);
    await event(cal, 'Last week', -7, -6.9);
    await event(cal, 'Under way', -0.05, 0.05);
    await event(cal, 'Next week', 7, 7.1);
    await event(cal, 'Weekly for ever', -400, -399.9, { recurrence_rule: 'FREQ=WEEKLY' });
    const until = new Date(Date.now() - 200 * DAY).toISOString().slice(0, 10).replace(/-/g, '');
    await event(cal, 'Weekly, ended', -400, -399.9, { recurrence_rule: `FREQ=WEEKLY;UNTIL=${until}T000000Z` });
    await event(cal, 'Weekly, ending soon', -400, -399.9, { recurrence_rule: `FREQ=DAILY;UNTIL=${at(-3).slice(0, 10).replace(/-/g, '')}T000000Z` });

    const text = await feedText(cal.uid);
    expect(readWithIcalJs(text)).toHaveLength(5);
    expect(summaries(text)).toEqual(['Last week', 'Next week', 'Under way', 'Weekly for ever', 'Weekly\\, ending soon']);
    // The whole history is still in the API.
    expect((await team.api.get(`/api/calendars/${cal.public_id}/events?limit=50`)).body.data).toHaveLength(7);
  });

  it('keeps only upcoming events when the limit is reached, and no past days when asked for none', async () => {
    const cal = await calendar({ feed_max_events: 2 });
    await event(cal, 'Yesterday', -1, -0.9);
    await event(cal, 'In two days', 2, 2.1);
    await event(cal, 'Tomorrow', 1, 1.1);
    await event(cal, 'In three days', 3, 3.1);
    expect(summaries(await feedText(cal.uid))).toEqual(['In two days', 'Tomorrow']);

    const update = await team.api.put(`/api/calendars/${cal.public_id}`, { name: 'Feed window', timezone: 'UTC', feed_max_events: null, feed_past_days: 0 });
    expect(update.status).toBe(200);
    expect([update.body.data.feed_past_days, update.body.data.feed_max_events]).toEqual([0, null]);
    expect(summaries(await feedText(cal.uid))).toEqual(['In three days', 'In two days', 'Tomorrow']);
  });

  it.each([
    [{ feed_past_days: -1 }, 'feed_past_days'],
    [{ feed_past_days: 367 }, 'feed_past_days'],
    [{ feed_max_events: 0 }, 'feed_max_events'],
    [{ feed_max_events: 5001 }, 'feed_max_events'],
    [{ feed_max_events: 1.5 }, 'feed_max_events'],
  ])('refuses a window past the maximums: %j', async (settings, field) => {
    const res = await team.api.post('/api/calendars', { name: 'Too wide', timezone: 'UTC', ...settings });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual([field]);
  });
});

describe('encodings', () => {
  let uid: string;
  let text: string;
  beforeAll(async () => {
    const cal = await calendar();
    for (let i = 0; i < 30; i++) await event(cal, `Session ${i}`, 1 + i, 1.05 + i, { description: '<p>Bring a notebook and questions.</p>' });
    uid = cal.uid;
    text = await feedText(uid);
  });

  it('sends the text to a client that accepts no encoding, with its length', async () => {
    const res = await raw(`/c/${uid}.ics`, { 'Accept-Encoding': 'identity' });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    expect(res.body.toString('utf8')).toBe(text);
    expect(res.headers.vary).toMatch(/Accept-Encoding/);
  });

  it.each([
    ['gzip', gunzipSync],
    ['br', brotliDecompressSync],
  ])('sends %s to a client that accepts it', async (encoding, decode) => {
    const res = await raw(`/c/${uid}.ics`, { 'Accept-Encoding': encoding });
    expect(res.headers['content-encoding']).toBe(encoding);
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    expect(res.body.length).toBeLessThan(Buffer.byteLength(text) / 3);
    expect(decode(res.body).toString('utf8')).toBe(text);
  });

  it('reads the same in curl with --compressed', async () => {
    // Not spawnSync: the gateway answers from this process.
    const { stdout } = await promisify(execFile)('curl', ['-sS', '--compressed', '-D', '-', `${gw.baseUrl}/c/${uid}.ics`], { encoding: 'utf8' });
    const [head, body] = [stdout.slice(0, stdout.indexOf('\r\n\r\n')), stdout.slice(stdout.indexOf('\r\n\r\n') + 4)];
    expect(head.toLowerCase()).toMatch(/content-encoding: (br|gzip)/);
    expect(body).toBe(text);
  });

  it('answers 304 to the ETag of any encoding: the content is the same', async () => {
    const gz = await raw(`/c/${uid}.ics`, { 'Accept-Encoding': 'gzip' });
    const plain = await raw(`/c/${uid}.ics`, { 'Accept-Encoding': 'identity' });
    expect(gz.headers.etag).not.toBe(plain.headers.etag);
    expect((await raw(`/c/${uid}.ics`, { 'Accept-Encoding': 'identity', 'If-None-Match': String(gz.headers.etag) })).status).toBe(304);
    expect((await raw(`/c/${uid}.ics`, { 'Accept-Encoding': 'br', 'If-None-Match': String(plain.headers.etag) })).status).toBe(304);
    expect((await raw(`/c/${uid}.ics`, { 'If-None-Match': '"something-else"' })).status).toBe(200);
  });
});

describe('builds', () => {
  const builds = async () => {
    const res = await gw.anon.get('/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
    const line = res.text.split('\n').find((l) => l.startsWith('calendar_feed_builds_total{'));
    return Number(line?.split(' ').pop() ?? 0);
  };

  it('shares one build among cold requests that arrive together, and builds again after a change', async () => {
    const cal = await calendar();
    for (let i = 0; i < 20; i++) await event(cal, `Talk ${i}`, 1 + i, 1.05 + i);
    const before = await builds();
    const answers = await Promise.all(Array.from({ length: 10 }, () => raw(`/c/${cal.uid}.ics`)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((a) => a.body.toString('utf8'))).size).toBe(1);
    expect((await builds()) - before).toBe(1);

    await event(cal, 'Added', 30, 30.1);
    expect(summaries(await feedText(cal.uid))).toContain('Added');
    expect((await builds()) - before).toBe(2);
  });
});
