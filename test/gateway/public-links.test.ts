import { parse as parseDisposition } from 'content-disposition';
import ical from 'node-ical';
import { startGateway, type TestGateway, type TestTeam } from '../helpers/gateway';
import { readWithIcalJs } from '../helpers/ics-readers';

let gw: TestGateway;
let team: TestTeam;
let cal: { public_id: string; uid: string };

beforeAll(async () => {
  gw = await startGateway();
  team = await gw.newTeam();
  cal = (await team.api.post('/api/calendars', { name: 'Public', timezone: 'America/New_York' })).body.data;
});
afterAll(() => gw.close());

async function createEvent(body: Record<string, unknown>) {
  const res = await team.api.post(`/api/calendars/${cal.public_id}/events`, body);
  expect(res.status).toBe(200);
  return res.body as { data: { uid: string; public_id: string; public_url: string }; links: Record<string, string> };
}

/** Follows nothing: the Location of a 302 as a URL. */
async function redirectOf(url: string, headers: Record<string, string> = {}): Promise<URL> {
  const res = await fetch(url, { redirect: 'manual', headers });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location') as string);
}

const timed = {
  title: 'Board meeting & "budget" <review>',
  date_start: '2026-07-14 13:00',
  date_end: '2026-07-14 14:30',
  timezone: 'America/New_York',
  location: 'HQ, Room 4',
  description: '<p>Agenda: numbers &amp; plans</p><p>Second line</p>',
  busy_type: 'busy',
};
const allDay = { title: 'Offsite', is_all_day: true, date_start: '2026-04-14', date_end: '2026-04-16', timezone: 'Europe/Amsterdam' };
const recurring = { ...timed, title: 'Weekly sync', recurrence_rule: 'FREQ=WEEKLY;BYDAY=TU;COUNT=10' };

describe('Google links', () => {
  it('timed event in a DST zone: local wall time with ctz', async () => {
    const { links } = await createEvent(timed);
    const url = await redirectOf(links.google);
    expect(url.origin + url.pathname).toBe('https://calendar.google.com/calendar/render');
    const q = url.searchParams;
    expect(q.get('action')).toBe('TEMPLATE');
    expect(q.get('text')).toBe('Board meeting & "budget" <review>');
    expect(q.get('dates')).toBe('20260714T130000/20260714T143000');
    expect(q.get('ctz')).toBe('America/New_York');
    expect(q.get('location')).toBe('HQ, Room 4');
    expect(q.get('details')).toBe('Agenda: numbers & plans\n\nSecond line');
    expect(q.get('trp')).toBe('true');
    expect(q.get('crm')).toBe('BUSY');
    expect(url.search).not.toContain('+'); // spaces as %20
  });

  it('all-day multi-day: dates with the exclusive next day, no ctz', async () => {
    const { links } = await createEvent(allDay);
    const q = (await redirectOf(links.google)).searchParams;
    expect(q.get('dates')).toBe('20260414/20260417');
    expect(q.has('ctz')).toBe(false);
    expect(q.has('crm')).toBe(false);
  });

  it('all-day and free: crm=AVAILABLE, which Google reads where it ignores trp', async () => {
    const { links } = await createEvent({ ...allDay, busy_type: 'free' });
    const q = (await redirectOf(links.google)).searchParams;
    expect([q.get('trp'), q.get('crm')]).toEqual(['false', 'AVAILABLE']);
  });

  it('recurring: the RRULE in recur', async () => {
    const { links } = await createEvent(recurring);
    expect((await redirectOf(links.google)).searchParams.get('recur')).toBe('RRULE:FREQ=WEEKLY;BYDAY=TU;COUNT=10');
  });
});

describe('Outlook.com and Office 365 links', () => {
  it.each([
    ['outlook_web', 'https://outlook.live.com/calendar/deeplink/compose'],
    ['office365', 'https://outlook.cloud.microsoft/calendar/deeplink/compose'],
  ])('%s: timed event in UTC with Z', async (key, base) => {
    const { links } = await createEvent(timed);
    const url = await redirectOf(links[key]);
    expect(url.origin + url.pathname).toBe(base);
    const q = url.searchParams;
    expect(q.get('path')).toBe('/calendar/action/compose');
    expect(q.get('rru')).toBe('addevent');
    expect(q.get('subject')).toBe('Board meeting & "budget" <review>');
    expect(q.get('startdt')).toBe('2026-07-14T17:00:00Z');
    expect(q.get('enddt')).toBe('2026-07-14T18:30:00Z');
    expect(q.get('allday')).toBe('false');
    expect(q.get('location')).toBe('HQ, Room 4');
    expect(q.get('body')).toBe('Agenda: numbers &amp; plans<br><br>Second line');
  });

  it.each(['outlook_web', 'office365'])('%s: all-day with allday=true and the exclusive end date', async (key) => {
    const { links } = await createEvent(allDay);
    const q = (await redirectOf(links[key])).searchParams;
    expect([q.get('startdt'), q.get('enddt'), q.get('allday')]).toEqual(['2026-04-14', '2026-04-17', 'true']);
  });

  it.each(['outlook_web', 'office365'])('%s: recurring events say how they repeat in the body', async (key) => {
    const { links } = await createEvent(recurring);
    expect((await redirectOf(links[key])).searchParams.get('body')).toMatch(/^Repeats every week on Tuesday, 10 times\.<br><br>Agenda/);
  });
});

describe('Yahoo links', () => {
  it('timed: v=60 with upper-case parameters in the event\'s wall time, without Z', async () => {
    const { links } = await createEvent(timed);
    const url = await redirectOf(links.yahoo);
    expect(url.origin + url.pathname).toBe('https://calendar.yahoo.com/');
    const q = url.searchParams;
    expect(q.get('v')).toBe('60');
    expect(q.get('TITLE')).toBe('Board meeting & "budget" <review>');
    expect(q.get('ST')).toBe('20260714T130000');
    expect(q.get('ET')).toBe('20260714T143000');
    expect(q.get('DESC')).toBe('Agenda: numbers & plans\n\nSecond line');
    expect(q.get('in_loc')).toBe('HQ, Room 4');
  });

  it('all-day, one day: ST and DUR=allday, no ET', async () => {
    const { links } = await createEvent({ ...allDay, date_end: allDay.date_start });
    const q = (await redirectOf(links.yahoo)).searchParams;
    expect([q.get('ST'), q.get('ET'), q.get('DUR')]).toEqual(['20260414', null, 'allday']);
  });

  it('all-day, several days: ST and the exclusive ET, no DUR', async () => {
    const { links } = await createEvent(allDay);
    const q = (await redirectOf(links.yahoo)).searchParams;
    expect([q.get('ST'), q.get('ET'), q.get('DUR')]).toEqual(['20260414', '20260417', null]);
  });

  it('recurring: the rule in words', async () => {
    const { links } = await createEvent(recurring);
    expect((await redirectOf(links.yahoo)).searchParams.get('DESC')).toMatch(/^Repeats every week on Tuesday, 10 times\./);
  });
});

describe('long descriptions', () => {
  it.each(['google', 'outlook_web', 'office365', 'yahoo'])('%s stays under 2000 characters with a link back to the page', async (key) => {
    const long: string = Array.from({ length: 400 }, (_, i) => `word${i} ünïcødé`).join(' ');
    const { links, data } = await createEvent({ ...timed, description: long });
    const url = await redirectOf(links[key]);
    expect(url.href.length).toBeLessThanOrEqual(2000);
    const param = { google: 'details', outlook_web: 'body', office365: 'body', yahoo: 'DESC' }[key] as string;
    const text = url.searchParams.get(param) as string;
    expect(text).toContain(data.public_url);
    // cut at a word, not inside one
    const kept = text.split('…')[0];
    expect(long.startsWith(kept)).toBe(true);
    expect(long[kept.length]).toBe(' ');
  });
});

describe('long titles and locations', () => {
  const PARAMS = {
    google: { title: 'text', location: 'location', description: 'details' },
    outlook_web: { title: 'subject', location: 'location', description: 'body' },
    office365: { title: 'subject', location: 'location', description: 'body' },
    yahoo: { title: 'TITLE', location: 'in_loc', description: 'DESC' },
  } as const;
  // 255 characters (UTF-16 units, as the field limit counts them) of CJK with emoji: a
  // surrogate pair or a ZWJ sequence sits at every possible cut.
  const cjk = (seed: string) => Array.from({ length: 400 }, (_, i) => (i % 7 === 3 ? '🎉' : i % 11 === 5 ? '👩‍💻' : seed[i % seed.length])).join('').slice(0, 255).replace(/[\uD800-\uDBFF]$/, '会');
  const title = cjk('年度会议北京上海');
  const location = cjk('中关村大街一号会议中心');
  const description = `<p>${cjk('议程与讨论安排')}${cjk('晚餐和交流')}</p>`;

  /** The decoded text without the ellipsis that marks a cut, checked to be a prefix of the original. */
  function expectPrefix(value: string | null, original: string): string {
    expect(value).not.toBeNull();
    const kept = (value as string).replace(/…$/, '');
    expect(original.startsWith(kept)).toBe(true);
    if (kept !== original) expect(value).toMatch(/…$/);
    return kept;
  }

  it.each(Object.keys(PARAMS))('%s: a 255-character CJK title and location stay under 2000 characters, cut at characters', async (key) => {
    const { links, data } = await createEvent({ ...timed, title, location, description });
    const url = await redirectOf(links[key]);
    expect(url.href.length).toBeLessThanOrEqual(2000);
    const names = PARAMS[key as keyof typeof PARAMS];
    const q = url.searchParams;
    // The description goes first (down to the link back), then the location, then the title.
    expect(q.get(names.description)).toContain(`More: ${data.public_url}`);
    expect(q.get(names.location)).toBeNull();
    expect(expectPrefix(q.get(names.title), title).length).toBeGreaterThan(100);
  });

  it.each(Object.keys(PARAMS))('%s: a shorter title is kept whole and the location is cut', async (key) => {
    const shortTitle = title.slice(0, 60);
    const { links } = await createEvent({ ...timed, title: shortTitle, location, description });
    const url = await redirectOf(links[key]);
    expect(url.href.length).toBeLessThanOrEqual(2000);
    const names = PARAMS[key as keyof typeof PARAMS];
    expect(url.searchParams.get(names.title)).toBe(shortTitle);
    expect(expectPrefix(url.searchParams.get(names.location), location).length).toBeGreaterThan(0);
  });

  it.each(Object.keys(PARAMS))('%s: a long CJK description without spaces is cut between characters', async (key) => {
    const text = cjk('议程与讨论安排晚餐');
    const { links, data } = await createEvent({ ...timed, title: 'Short', location: 'Room 1', description: Array.from({ length: 4 }, () => text).join('') });
    const url = await redirectOf(links[key]);
    expect(url.href.length).toBeLessThanOrEqual(2000);
    const names = PARAMS[key as keyof typeof PARAMS];
    const got = url.searchParams.get(names.description) as string;
    expect(got).toContain(data.public_url);
    const kept = got.split('…')[0];
    expect(kept.length).toBeGreaterThan(0);
    expect(text.repeat(4).startsWith(kept)).toBe(true);
    expect(url.searchParams.get(names.location)).toBe('Room 1');
  });
});

describe('ICS downloads', () => {
  it.each(['ics', 'apple', 'outlook'])('%s: RFC 5545 text a real parser reads back', async (key) => {
    const { links, data } = await createEvent({ ...timed, reminder_before: 30 });
    const res = await fetch(links[key]);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="board-meeting-budget-review.ics"');
    const text = await res.text();
    expect(text).toContain('\r\n');
    for (const line of text.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    const [e] = Object.values(ical.sync.parseICS(text)).filter((c) => c?.type === 'VEVENT') as ical.VEvent[];
    expect(e.uid).toBe(`evt_${data.uid}@${new URL(gw.baseUrl).host}`);
    expect(e.summary).toBe(timed.title);
    expect(e.start.toISOString()).toBe('2026-07-14T17:00:00.000Z');
    expect((e.start as { tz?: string }).tz).toBe('America/New_York');
    expect(e.location).toBe('HQ, Room 4');
    expect(e.transparency).toBe('OPAQUE');
    expect(text).toMatch(/TRIGGER:-PT30M/);
    expect(text).toMatch(/DTSTAMP:\d{8}T\d{6}Z/);
    expect(text).toMatch(/SEQUENCE:0/);
  });

  it('all-day and recurring events', async () => {
    const a = await fetch((await createEvent(allDay)).links.ics).then((r) => r.text());
    expect(a).toContain('DTSTART;VALUE=DATE:20260414');
    expect(a).toContain('DTEND;VALUE=DATE:20260417');
    const r = await fetch((await createEvent(recurring)).links.ics).then((x) => x.text());
    expect(r).toContain('RRULE:FREQ=WEEKLY;BYDAY=TU;COUNT=10');
  });

  it('the UID and SEQUENCE follow the event: updates raise SEQUENCE, the UID stays', async () => {
    const { links, data } = await createEvent(timed);
    await team.api.put(`/api/calendars/${cal.public_id}/events/${data.public_id}`, { ...timed, title: 'Moved' });
    const text = await fetch(links.ics).then((r) => r.text());
    expect(text).toContain(`UID:evt_${data.uid}@`);
    expect(text).toContain('SEQUENCE:1');
    expect(text).toContain('SUMMARY:Moved');
  });
});

describe('ICS time zones, end to end: every reader places events at the API\'s date_start', () => {
  // Zones whose changes follow no yearly rule (Cairo, Casablanca) and a date under rules
  // older than today's (New York before 2007), read by ical.js (Thunderbird).
  const cases = [
    { title: 'Cairo summer', timezone: 'Africa/Cairo', date_start: '2027-07-15 15:00', date_end: '2027-07-15 16:00' },
    { title: 'Casablanca winter', timezone: 'Africa/Casablanca', date_start: '2027-02-15 12:00', date_end: '2027-02-15 13:00' },
    { title: 'New York 2006', timezone: 'America/New_York', date_start: '2006-03-20 10:00', date_end: '2006-03-20 11:00' },
    { title: 'Weekly 2006', timezone: 'America/New_York', date_start: '2006-03-15 10:00', date_end: '2006-03-15 11:00', recurrence_rule: 'FREQ=WEEKLY;COUNT=10' },
  ];
  const instant = (iso: string) => new Date(Date.parse(iso)).toISOString();

  it('in each event\'s .ics and in the calendar feed', async () => {
    const calendar = (await team.api.post('/api/calendars', { name: 'Zones', timezone: 'UTC' })).body.data as { public_id: string; public_url: string };
    const created: { uid: string; date_start: string; links: Record<string, string> }[] = [];
    for (const body of cases) {
      const res = await team.api.post(`/api/calendars/${calendar.public_id}/events`, body);
      expect(res.status).toBe(200);
      created.push({ ...res.body.data, links: res.body.links });
    }
    // Read as of a few days after the 2006 event, so that it is in the feed's window.
    gw.clock.set('2006-03-25T00:00:00Z');
    const feed = readWithIcalJs(await fetch(`${calendar.public_url}.ics`).then((r) => r.text()), 20);
    gw.clock.reset();
    for (const [i, event] of created.entries()) {
      const [single] = readWithIcalJs(await fetch(event.links.ics).then((r) => r.text()), 20);
      const inFeed = feed.find((e) => e.uid.startsWith(`evt_${event.uid}@`));
      for (const read of [single, inFeed]) expect([cases[i].title, new Date(read?.startMs ?? 0).toISOString()]).toEqual([cases[i].title, instant(event.date_start)]);
    }
    // 10:00 in New York every week: EST until 2 April 2006 (the first Sunday of April then), EDT after.
    const weekly = created[3];
    const [read] = readWithIcalJs(await fetch(weekly.links.ics).then((r) => r.text()), 20);
    expect(read.occurrencesMs?.map((ms) => new Date(ms).toISOString())).toEqual([
      '2006-03-15T15:00:00.000Z',
      '2006-03-22T15:00:00.000Z',
      '2006-03-29T15:00:00.000Z',
      '2006-04-05T14:00:00.000Z',
      '2006-04-12T14:00:00.000Z',
      '2006-04-19T14:00:00.000Z',
      '2006-04-26T14:00:00.000Z',
      '2006-05-03T14:00:00.000Z',
      '2006-05-10T14:00:00.000Z',
      '2006-05-17T14:00:00.000Z',
    ]);
  });
});

describe('Content-Disposition of titles in other scripts', () => {
  it('a Japanese title downloads under its own name (filename*), with an ASCII fallback', async () => {
    const { links } = await createEvent({ ...timed, title: '会議 2027' });
    for (const key of ['ics', 'apple', 'outlook']) {
      const header = (await fetch(links[key])).headers.get('content-disposition') as string;
      expect(header).toBe("attachment; filename=\"event-2027.ics\"; filename*=UTF-8''%E4%BC%9A%E8%AD%B0-2027.ics");
      expect(parseDisposition(header).parameters.filename).toBe('会議-2027.ics');
    }
  });

  it('an Arabic calendar name names its feed', async () => {
    const calendar = (await team.api.post('/api/calendars', { name: 'تقويم الفريق', timezone: 'Asia/Riyadh' })).body.data as { public_url: string };
    const header = (await fetch(`${calendar.public_url}.ics`)).headers.get('content-disposition') as string;
    expect(parseDisposition(header)).toMatchObject({ type: 'inline', parameters: { filename: 'تقويم-الفريق.ics' } });
    expect(parseDisposition(header, { extended: false }).parameters.filename).toBe('event.ics');
  });
});

describe('auto', () => {
  it.each([
    ['iPhone', 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1', 'ics'],
    ['Mac', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15', 'ics'],
    ['Android', 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36', 'google'],
    ['Windows', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36 Edg/126.0', 'ics'],
    ['Instagram in-app', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 330.0.0', 'page'],
    ['a bot', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'page'],
    ['Linux desktop', 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'google'],
  ])('%s', async (_name, ua, expected) => {
    const { links, data } = await createEvent(timed);
    const res = await fetch(links.auto, { redirect: 'manual', headers: { 'User-Agent': ua } });
    // Whatever it answers, a cache in front must not give it to another kind of browser.
    expect(res.headers.get('vary')).toMatch(/User-Agent/);
    if (expected === 'ics') {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    } else if (expected === 'google') {
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toMatch(/^https:\/\/calendar\.google\.com\//);
    } else {
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(data.public_url);
    }
  });
});

describe('pages, embed and short links', () => {
  it('the event page shows the details, escaped, with a button per platform', async () => {
    const hostile = '<script>alert(1)</script>';
    const { data, links } = await createEvent({ ...timed, title: hostile, location: `<img src=x onerror=alert(2)>`, description: `${hostile}<b onclick="x()">bold</b> <a href="javascript:alert(3)">x</a>` });
    const res = await fetch(data.public_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await res.text();
    // No script but ours: the JSON-LD data block and the local-time script the CSP names by hash.
    expect(page.match(/<script[^>]*>/g)).toEqual(['<script type="application/ld+json">', '<script>']);
    expect(page).not.toContain('<script>alert');
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'sha256-[\w+/]+=' 'sha256-[\w+/]+=';/);
    // (attribute values emptied first: escaped text inside one, as in the description meta tag, is no markup)
    expect(page.replace(/"[^"]*"/g, '""')).not.toMatch(/<img|<[^<>]*\son\w+=/i);
    expect(page).not.toMatch(/<img|href="javascript:/i);
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('Tue Jul 14, 2026 1:00 PM - 2:30 PM (EDT)');
    for (const key of ['apple', 'google', 'office365', 'outlook', 'outlook_web', 'yahoo', 'ics']) expect(page).toContain(`href="${links[key]}"`);
    expect(page).not.toMatch(/(?:src|href)="https?:\/\/(?!127\.0\.0\.1)/); // nothing from elsewhere
  });

  it('a URL location becomes a link', async () => {
    const { data } = await createEvent({ ...timed, location: 'https://meet.example.com/abc' });
    expect(await fetch(data.public_url).then((r) => r.text())).toContain('<a href="https://meet.example.com/abc" rel="nofollow noopener noreferrer" target="_blank">');
  });

  it('the embed widget can be framed and escapes too', async () => {
    const { data } = await createEvent({ ...timed, title: '<b>x</b>' });
    const res = await fetch(`${data.public_url}/embed`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain('frame-ancestors *');
    const body = await res.text();
    expect(body).toContain('&lt;b&gt;x&lt;/b&gt;');
    // every link opens in a new tab, the title's too, each with one rel
    const anchors = body.match(/<a\s[^>]*>/g) ?? [];
    expect(anchors).toHaveLength(8);
    for (const a of anchors) {
      expect(a).toContain('target="_blank"');
      expect(a.match(/\srel=/g)).toHaveLength(1);
    }
    expect(body).toContain(`<a href="${data.public_url}" target="_blank" rel="noopener">&lt;b&gt;x&lt;/b&gt;</a>`);
    expect(body).toContain(`<a href="${data.public_url}/google" data-platform="google" target="_blank" rel="noopener nofollow">`);
  });

  it('the event and calendar pages give each link one rel attribute', async () => {
    const own = await gw.newTeam();
    const c = (await own.api.post('/api/calendars', { name: 'Rels', timezone: 'UTC' })).body.data;
    const e = (await own.api.post(`/api/calendars/${c.public_id}/events`, { ...timed, date_start: '2030-07-14 13:00', date_end: '2030-07-14 14:00', location: 'https://meet.example.com/x' })).body.data;
    for (const url of [e.public_url, c.public_url]) {
      const anchors = (await fetch(url).then((r) => r.text())).match(/<a\s[^>]*>/g) ?? [];
      expect(anchors.length).toBeGreaterThan(7);
      for (const a of anchors) expect((a.match(/\srel=/g) ?? []).length).toBeLessThanOrEqual(1);
    }
  });

  it('/l/{short_link} redirects to the event or calendar page; unknown ones are 404', async () => {
    const { data } = await createEvent({ ...timed, short_link: 'Board-Q3' });
    expect((await redirectOf(`${gw.baseUrl}/l/board-q3`)).href).toBe(data.public_url);
    const c = (await team.api.post('/api/calendars', { name: 'Linked', timezone: 'UTC', short_link: 'team-cal-page' })).body.data;
    expect((await redirectOf(`${gw.baseUrl}/l/team-cal-page`)).href).toBe(c.public_url);
    expect((await fetch(`${gw.baseUrl}/l/nope-nope`, { redirect: 'manual' })).status).toBe(404);
  });

  describe('a short link given up is retired, not freed', () => {
    const linkStatus = async (slug: string) => (await fetch(`${gw.baseUrl}/l/${slug}`, { redirect: 'manual' })).status;
    const eventsOf = (c: { public_id: string }) => `/api/calendars/${c.public_id}/events`;

    it('an old slug still leads to its renamed event, and no other team can take it', async () => {
      const { data } = await createEvent({ ...timed, short_link: 'Spring-Gala' });
      const renamed = await team.api.put(`/api/calendars/${cal.public_id}/events/${data.public_id}`, { ...timed, short_link: 'gala-2027' });
      expect([renamed.status, renamed.body.data.short_link]).toEqual([200, 'gala-2027']);
      expect((await redirectOf(`${gw.baseUrl}/l/spring-gala`)).href).toBe(data.public_url);
      expect((await redirectOf(`${gw.baseUrl}/l/gala-2027`)).href).toBe(data.public_url);

      const other = await gw.newTeam();
      const theirCal = (await other.api.post('/api/calendars', { name: 'Theirs', timezone: 'UTC' })).body.data;
      for (const res of [
        await other.api.post(eventsOf(theirCal), { ...timed, short_link: 'spring-gala' }),
        await other.api.post('/api/calendars', { name: 'Theirs 2', timezone: 'UTC', short_link: 'SPRING-GALA' }),
        await other.api.put(`/api/calendars/${theirCal.public_id}`, { name: 'Theirs', timezone: 'UTC', short_link: 'spring-gala' }),
      ]) {
        expect(res.status).toBe(422);
        expect(res.body.errors).toEqual({ short_link: ['The short link has already been taken.'] });
      }
      // nothing half-written: their calendar has no event and kept no short link
      expect((await other.api.get(eventsOf(theirCal))).body.data).toHaveLength(0);
      expect((await other.api.get(`/api/calendars/${theirCal.public_id}`)).body.data.short_link).toBeNull();
      expect((await redirectOf(`${gw.baseUrl}/l/spring-gala`)).href).toBe(data.public_url);
    });

    it('the team that retired a slug can give it to another event or calendar, or take it back', async () => {
      const first = (await createEvent({ ...timed, short_link: 'team-reuse' })).data;
      await team.api.put(`/api/calendars/${cal.public_id}/events/${first.public_id}`, { ...timed, short_link: null });
      expect((await team.api.get(`/api/events/${first.public_id}`)).body.data.short_link).toBeNull();
      expect((await redirectOf(`${gw.baseUrl}/l/team-reuse`)).href).toBe(first.public_url);

      const second = (await createEvent({ ...timed, short_link: 'Team-Reuse' })).data;
      expect((await redirectOf(`${gw.baseUrl}/l/team-reuse`)).href).toBe(second.public_url);
      // now live again: the first event cannot have it back while the second holds it
      const back = await team.api.put(`/api/calendars/${cal.public_id}/events/${first.public_id}`, { ...timed, short_link: 'team-reuse' });
      expect(back.status).toBe(422);

      await team.api.put(`/api/calendars/${cal.public_id}/events/${second.public_id}`, { ...timed, short_link: 'team-reuse-2' });
      const c = (await team.api.put(`/api/calendars/${cal.public_id}`, { name: 'Public', timezone: 'America/New_York', short_link: 'team-reuse' })).body.data;
      expect(c.short_link).toBe('team-reuse');
      expect((await redirectOf(`${gw.baseUrl}/l/team-reuse`)).href).toBe(c.public_url);
      expect((await redirectOf(`${gw.baseUrl}/l/team-reuse-2`)).href).toBe(second.public_url);
      await team.api.put(`/api/calendars/${cal.public_id}`, { name: 'Public', timezone: 'America/New_York', short_link: null });

      // renamed away and back again: one event, its slug live once more
      const third = (await createEvent({ ...timed, short_link: 'round-trip' })).data;
      const path = `/api/calendars/${cal.public_id}/events/${third.public_id}`;
      await team.api.put(path, { ...timed, short_link: 'round-trip-b' });
      const again = await team.api.put(path, { ...timed, short_link: 'round-trip' });
      expect([again.status, again.body.data.short_link]).toEqual([200, 'round-trip']);
      expect((await redirectOf(`${gw.baseUrl}/l/round-trip-b`)).href).toBe(third.public_url);
    });

    it("a deleted event's or calendar's slug is a 404 and stays the team's", async () => {
      const { data } = await createEvent({ ...timed, short_link: 'gone-event' });
      expect((await team.api.delete(`/api/calendars/${cal.public_id}/events/${data.public_id}`)).status).toBe(200);
      expect(await linkStatus('gone-event')).toBe(404);
      const c = (await team.api.post('/api/calendars', { name: 'Short-lived', timezone: 'UTC', short_link: 'gone-cal' })).body.data;
      expect((await team.api.delete(`/api/calendars/${c.public_id}`)).status).toBe(200);
      expect(await linkStatus('gone-cal')).toBe(404);

      const other = await gw.newTeam();
      for (const slug of ['gone-event', 'gone-cal']) {
        expect((await other.api.post('/api/calendars', { name: 'Theirs', timezone: 'UTC', short_link: slug })).status).toBe(422);
      }
      const reused = (await team.api.post('/api/calendars', { name: 'Again', timezone: 'UTC', short_link: 'gone-event' })).body.data;
      expect((await redirectOf(`${gw.baseUrl}/l/gone-event`)).href).toBe(reused.public_url);
      expect((await createEvent({ ...timed, short_link: 'gone-cal' })).data.public_url).toBe(
        (await redirectOf(`${gw.baseUrl}/l/gone-cal`)).href,
      );
    });
  });

  it('unknown events and keys are 404 pages (JSON when asked)', async () => {
    const { data } = await createEvent(timed);
    for (const path of ['/e/AAAAAAAAAAAAAAAA', '/e/short', `/e/${data.uid}/nonsense`, '/e/AAAAAAAAAAAAAAAA/google']) {
      const res = await fetch(gw.baseUrl + path, { redirect: 'manual' });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
    }
    const json = await gw.anon.get('/e/AAAAAAAAAAAAAAAA');
    expect(json.status).toBe(404);
    expect(json.body).toEqual({ message: 'Event not found.' });
  });

  it('html_snippets point at these addresses', async () => {
    const created = await team.api.post(`/api/calendars/${cal.public_id}/events?with_html=1`, timed);
    const snippet: string = created.body.html_snippets['dot-sep'];
    const hrefs = [...snippet.matchAll(/href="([^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
    expect(hrefs).toHaveLength(7);
    for (const href of hrefs) {
      const res = await fetch(href, { redirect: 'manual' });
      expect([200, 302]).toContain(res.status);
    }
  });
});

describe("the words a web platform's link adds, in the visitor's language", () => {
  const desc = async (url: string, headers: Record<string, string> = {}) => (await redirectOf(url, headers)).searchParams.get('DESC');

  it('follows ?lang=, then Accept-Language, then the calendar, and says the answer varies with it', async () => {
    const { data, links } = await createEvent(recurring);
    expect(await desc(links.yahoo)).toMatch(/^Repeats every week on Tuesday, 10 times\./);
    expect(await desc(links.yahoo, { 'Accept-Language': 'de-DE,de;q=0.9,en;q=0.5' })).toMatch(/^Wiederholung: jede Woche am Dienstag, 10-mal\./);
    expect(await desc(`${links.yahoo}?lang=fr`, { 'Accept-Language': 'de' })).toMatch(/^Répétition : toutes les semaines, le mardi, 10 fois\./);
    const res = await fetch(links.outlook_web, { redirect: 'manual' });
    expect(res.headers.get('vary')).toContain('Accept-Language');
    // A calendar in Dutch: its visitors whose browser names none of our languages read Dutch.
    const dutch = (await team.api.post('/api/calendars', { name: 'Agenda', timezone: 'Europe/Amsterdam', locale: 'nl' })).body.data;
    const inDutch = (await team.api.post(`/api/calendars/${dutch.public_id}/events`, recurring)).body;
    expect(await desc(inDutch.links.yahoo, { 'Accept-Language': 'sv' })).toMatch(/^Herhaalt: /);
    // The page in a language asked for by its address links the platforms in it too.
    const page = await (await fetch(`${data.public_url}?lang=de`)).text();
    expect(page).toContain(`/e/${data.uid}/yahoo?lang=de`);
  });
});
