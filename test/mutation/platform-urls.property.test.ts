import fc from 'fast-check';
import { DateTime } from 'luxon';
import type { EventView } from '../../shared/calendar/event-view';
import { htmlToText } from '../../shared/calendar/html';
import { MAX_URL, subscribeUrls, WEB_PLATFORMS } from '../../services/gateway/calendar/platform-urls';

/**
 * Any event through every web platform's add-event URL, the URL parsed back (URLSearchParams):
 * the same title, location, description, times and busy type, in each platform's own format
 * (times worked out here with luxon, not with the builder's helpers).
 */
const PAGE = 'https://cal.example/e/ev1';
const ZONES = ['UTC', 'America/New_York', 'Europe/Amsterdam', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/St_Johns'];
const DAY = 86_400_000;

/** Short texts (they always fit in MAX_URL whole): any Unicode scalar values, line breaks included. */
const shortText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: fc.constantFrom('&', '<', '>', '"', "'", '%', '+', '=', '#', '?', ' ', '\n', 'é', '😀', 'a', '…'), maxLength: 30 }),
);
const nonEmpty = shortText.filter((s) => s.trim().length > 0 && s === s.trim());
const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const anyEvent = fc
  .record({
    title: nonEmpty,
    location: fc.option(nonEmpty, { nil: null }),
    description: fc.option(nonEmpty, { nil: null }),
    startMs: fc.integer({ min: Date.parse('2000-01-01T00:00:00Z'), max: Date.parse('2040-01-01T00:00:00Z') }).map((ms) => ms - (ms % 1000)),
    durationMs: fc.integer({ min: 0, max: 40 * DAY }).map((ms) => ms - (ms % 1000)),
    isAllDay: fc.boolean(),
    timezone: fc.constantFrom(...ZONES),
    busyType: fc.constantFrom('busy' as const, 'free' as const, null),
    weekly: fc.boolean(),
  })
  .map(
    (e): EventView => ({
      uid: 'ev1',
      title: e.title,
      descriptionHtml: e.description === null ? null : `<p>${escape(e.description)}</p>`,
      location: e.location,
      locationUrl: null,
      imageUrl: null,
      startMs: e.isAllDay ? e.startMs - (e.startMs % DAY) : e.startMs,
      endMs: e.isAllDay ? e.startMs - (e.startMs % DAY) + Math.floor(e.durationMs / DAY) * DAY : e.startMs + e.durationMs,
      isAllDay: e.isAllDay,
      timezone: e.timezone,
      recurrenceRule: e.weekly ? 'FREQ=WEEKLY;COUNT=3' : null,
      reminderBefore: null,
      busyType: e.busyType,
      sequence: 0,
      updatedMs: 0,
      pageUrl: PAGE,
    }),
  );

const local = (ms: number, zone: string, format: string) => DateTime.fromMillis(ms, { zone }).toFormat(format);
const utcDay = (ms: number, format: string) => DateTime.fromMillis(ms, { zone: 'UTC' }).toFormat(format);
const unHtml = (s: string) => s.replace(/<br>/g, '\n').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
const query = (url: string) => Object.fromEntries(new URL(url).searchParams);
const textOf = (v: EventView) => (v.descriptionHtml ? htmlToText(v.descriptionHtml) : '');

describe('any event → platform URL → parsed query', () => {
  it('Google: the same fields', () => {
    fc.assert(
      fc.property(anyEvent, (v) => {
        const url = WEB_PLATFORMS.google(v);
        expect(url.startsWith('https://calendar.google.com/calendar/render?')).toBe(true);
        expect(url.length).toBeLessThanOrEqual(MAX_URL);
        const q = query(url);
        const expected: Record<string, string> = { action: 'TEMPLATE', text: v.title };
        if (v.isAllDay) expected.dates = `${utcDay(v.startMs, 'yyyyLLdd')}/${utcDay(v.endMs + DAY, 'yyyyLLdd')}`;
        else {
          expected.dates = `${local(v.startMs, v.timezone, "yyyyLLdd'T'HHmmss")}/${local(v.endMs, v.timezone, "yyyyLLdd'T'HHmmss")}`;
          expected.ctz = v.timezone;
        }
        if (v.location) expected.location = v.location;
        if (v.recurrenceRule) expected.recur = `RRULE:${v.recurrenceRule}`;
        if (v.busyType) Object.assign(expected, { trp: String(v.busyType === 'busy'), crm: v.busyType === 'busy' ? 'BUSY' : 'AVAILABLE' });
        if (textOf(v)) expected.details = textOf(v);
        expect(q).toEqual(expected);
      }),
      { numRuns: 200, seed: 26 },
    );
  });

  it('Outlook.com and Office 365: the same fields, times in UTC, the body as HTML', () => {
    fc.assert(
      fc.property(anyEvent, fc.constantFrom('outlook_web' as const, 'office365' as const), (v, platform) => {
        const url = WEB_PLATFORMS[platform](v);
        const base = platform === 'outlook_web' ? 'https://outlook.live.com/' : 'https://outlook.cloud.microsoft/';
        expect(url.startsWith(`${base}calendar/deeplink/compose?`)).toBe(true);
        const { body, ...q } = query(url);
        const expected: Record<string, string> = { path: '/calendar/action/compose', rru: 'addevent', subject: v.title };
        if (v.isAllDay) Object.assign(expected, { startdt: utcDay(v.startMs, 'yyyy-LL-dd'), enddt: utcDay(v.endMs + DAY, 'yyyy-LL-dd'), allday: 'true' });
        else Object.assign(expected, { startdt: new Date(v.startMs).toISOString().replace('.000Z', 'Z'), enddt: new Date(v.endMs).toISOString().replace('.000Z', 'Z'), allday: 'false' });
        if (v.location) expected.location = v.location;
        expect(q).toEqual(expected);
        const text = unHtml(body ?? '');
        if (v.recurrenceRule) expect(text).toMatch(/^Repeats .+\.(\n\n|$)/);
        expect(body !== undefined).toBe(Boolean(v.recurrenceRule || textOf(v)));
        expect(text.replace(/^Repeats [^\n]*\.(\n\n)?/, '')).toBe(textOf(v));
        expect((body ?? '').replace(/<br>/g, '')).not.toMatch(/[<>]/);
      }),
      { numRuns: 200, seed: 26 },
    );
  });

  it('Yahoo: the same fields, wall time without Z, one all-day day as DUR=allday', () => {
    fc.assert(
      fc.property(anyEvent, (v) => {
        const q = query(WEB_PLATFORMS.yahoo(v));
        const { DESC, ...rest } = q;
        const expected: Record<string, string> = { v: '60', TITLE: v.title };
        if (!v.isAllDay) Object.assign(expected, { ST: local(v.startMs, v.timezone, "yyyyLLdd'T'HHmmss"), ET: local(v.endMs, v.timezone, "yyyyLLdd'T'HHmmss") });
        else if (v.endMs === v.startMs) Object.assign(expected, { ST: utcDay(v.startMs, 'yyyyLLdd'), DUR: 'allday' });
        else Object.assign(expected, { ST: utcDay(v.startMs, 'yyyyLLdd'), ET: utcDay(v.endMs + DAY, 'yyyyLLdd') });
        if (v.location) expected.in_loc = v.location;
        expect(rest).toEqual(expected);
        // Yahoo repeats nothing from a link: the rule is said in words first.
        if (v.recurrenceRule) expect(DESC).toMatch(/^Repeats .+\.(\n\n|$)/);
        // Nothing to say: no DESC at all, not an empty one.
        expect('DESC' in q).toBe(Boolean(v.recurrenceRule || textOf(v)));
        expect((DESC ?? '').replace(/^Repeats [^\n]*\.(\n\n)?/, '')).toBe(textOf(v));
      }),
      { numRuns: 200, seed: 26 },
    );
  });

  it('long texts: every URL stays under MAX_URL and keeps a prefix of each text', () => {
    const long = fc.string({ unit: 'grapheme', minLength: 0, maxLength: 1500 });
    fc.assert(
      fc.property(anyEvent, long, long, long, (v, title, location, description) => {
        const event = { ...v, title: `T${title}`, location: location || null, descriptionHtml: `<p>${escape(description)}</p>` };
        for (const build of Object.values(WEB_PLATFORMS)) {
          const url = build(event);
          expect(url.length).toBeLessThanOrEqual(MAX_URL);
          const q = query(url);
          const got = q.text ?? q.subject ?? q.TITLE;
          expect(event.title.startsWith(got.replace(/…$/, ''))).toBe(true);
        }
      }),
      { numRuns: 40, seed: 26 },
    );
  });
});

describe('subscribe URLs', () => {
  it('carry the feed and the name, cut to fit', () => {
    const urls = subscribeUrls('https://cal.example/feeds/abc.ics', 'Team, "events" & more');
    expect(urls.apple).toBe('webcal://cal.example/feeds/abc.ics');
    expect(query(urls.google)).toEqual({ cid: 'webcal://cal.example/feeds/abc.ics' });
    expect(urls.outlook_web.startsWith('https://outlook.live.com/calendar/0/addfromweb?')).toBe(true);
    expect(urls.office365.startsWith('https://outlook.cloud.microsoft/calendar/0/addfromweb?')).toBe(true);
    for (const u of [urls.outlook_web, urls.office365]) expect(query(u)).toEqual({ url: 'https://cal.example/feeds/abc.ics', name: 'Team, "events" & more' });
    expect(subscribeUrls('http://cal.example/f.ics', 'n').apple).toBe('webcal://cal.example/f.ics');
    const long = subscribeUrls('https://cal.example/f.ics', `${'word '.repeat(600)}end`);
    expect(long.outlook_web.length).toBeLessThanOrEqual(MAX_URL);
    const name = query(long.outlook_web).name;
    expect(name.endsWith('…')).toBe(true);
    expect(name.length).toBeGreaterThan(500);
    expect(`${'word '.repeat(600)}end`.startsWith(name.slice(0, -1))).toBe(true);
  });
});

/*
 * Known answers for texts too long for a URL, in ASCII letters (one character each in the
 * URL) so the room left for a text is counted exactly: MAX_URL less the URL without it.
 */
describe('texts cut to fit in MAX_URL', () => {
  const event = (over: Partial<EventView> = {}): EventView => ({
    uid: 'ev1',
    title: 'T',
    descriptionHtml: null,
    location: null,
    locationUrl: null,
    imageUrl: null,
    startMs: Date.parse('2026-07-14T17:00:00Z'),
    endMs: Date.parse('2026-07-14T18:00:00Z'),
    isAllDay: false,
    timezone: 'UTC',
    recurrenceRule: null,
    reminderBefore: null,
    busyType: null,
    sequence: 0,
    updatedMs: 0,
    pageUrl: PAGE,
    ...over,
  });
  const more = `More: ${PAGE}`;
  const suffix = `…\n\n${more}`;
  const google = (v: EventView) => WEB_PLATFORMS.google(v);
  /** The URL length of the event without a description, its title `T` and `pad` letters. */
  const withoutDescription = (pad: number, over: Partial<EventView> = {}) => google(event({ ...over, title: `T${'a'.repeat(pad)}` })).length;
  /** The title padding that leaves `room` URL characters for a cut description and its suffix. */
  const padFor = (room: number, over: Partial<EventView> = {}) => MAX_URL - withoutDescription(0, over) - '&details='.length - encodeURIComponent(suffix).length - room;
  /** The details of the Google URL with `room` characters for the description's kept part. */
  const detailsWithRoom = (room: number, descriptionHtml: string) => {
    const url = google(event({ title: `T${'a'.repeat(padFor(room))}`, descriptionHtml }));
    expect(url.length).toBeLessThanOrEqual(MAX_URL);
    return query(url).details;
  };

  it('leaves a URL of exactly MAX_URL characters whole, and cuts one a character longer', () => {
    const descriptionHtml = `<p>${'d'.repeat(100)}</p>`;
    const pad = MAX_URL - google(event({ descriptionHtml })).length;
    const whole = google(event({ title: `T${'a'.repeat(pad)}`, descriptionHtml }));
    expect(whole.length).toBe(MAX_URL);
    expect(query(whole).details).toBe('d'.repeat(100));
    // One letter too many: the description gives way to that letter and the suffix.
    expect(query(google(event({ title: `T${'a'.repeat(pad + 1)}`, descriptionHtml }))).details).toBe(`${'d'.repeat(99 - encodeURIComponent(suffix).length)}${suffix}`);
  });

  it('keeps as much of one long word as fits, then … and the link back', () => {
    for (const room of [0, 1, 2, 50, 51]) {
      const url = google(event({ title: `T${'a'.repeat(padFor(room))}`, descriptionHtml: `<p>${'d'.repeat(3000)}</p>` }));
      expect(query(url).details).toBe(room ? `${'d'.repeat(room)}${suffix}` : more);
      expect(url.length).toBe(room ? MAX_URL : MAX_URL - encodeURIComponent(suffix).length + encodeURIComponent(more).length);
    }
  });

  it('never cuts inside a surrogate pair, and keeps every whole character that fits', () => {
    // 😀 is two UTF-16 units and 12 URL characters (%F0%9F%98%80).
    for (let room = 20; room < 40; room++) {
      const details = detailsWithRoom(room, `<p>${'a😀'.repeat(200)}</p>`);
      const kept = details.slice(0, -suffix.length);
      expect(details.endsWith(suffix)).toBe(true);
      expect(Buffer.from(kept).toString()).toBe(kept); // no lone surrogate (it would read back as U+FFFD)
      expect('a😀'.repeat(200).startsWith(kept)).toBe(true);
      expect(encodeURIComponent(kept).length).toBeLessThanOrEqual(room);
      const next = 'a😀'.repeat(200).slice(kept.length, kept.length + (kept.endsWith('a') ? 2 : 1));
      expect(encodeURIComponent(kept + next).length).toBeGreaterThan(room);
    }
  });

  it('cuts at a word unless that drops more than 40% of what fits', () => {
    // The last space at 60 of 100 fitting characters: the part-word stays; of 99, it goes (a
    // space takes three URL characters, %20).
    const long = `<p>${'a'.repeat(60)} ${'b'.repeat(3000)}</p>`;
    expect(detailsWithRoom(102, long)).toBe(`${'a'.repeat(60)} ${'b'.repeat(39)}${suffix}`);
    expect(detailsWithRoom(101, long)).toBe(`${'a'.repeat(60)}${suffix}`);
    // The last space decides, not the first: ` c` stays, the part of the b-word goes.
    expect(detailsWithRoom(102, `<p>${'a'.repeat(65)} c ${'b'.repeat(3000)}</p>`)).toBe(`${'a'.repeat(65)} c${suffix}`);
    // What fits ends a word: the word stays, however late the space before it.
    expect(detailsWithRoom(102, `<p>${'a'.repeat(70)} ${'b'.repeat(29)} ${'c'.repeat(3000)}</p>`)).toBe(`${'a'.repeat(70)} ${'b'.repeat(29)}${suffix}`);
    // No space left before the …: 70 letters and a line break (%0A) fit, the next is a line break too.
    expect(detailsWithRoom(73, `<p>${'a'.repeat(70)}</p><p>${'b'.repeat(3000)}</p>`)).toBe(`${'a'.repeat(70)}${suffix}`);
  });

  it('then gives the link alone, then cuts the location, then the title', () => {
    const location = 'Room 12, east wing of the old building';
    const over = { location, descriptionHtml: `<p>${'d'.repeat(3000)}</p>` };
    // From the room for one letter of description to a cut title.
    const start = padFor(1, { location });
    const seen = new Set<string>();
    for (let pad = start - 1; pad < start + 200; pad++) {
      const url = google(event({ ...over, title: `T${'a'.repeat(pad)}` }));
      expect(url.length).toBeLessThanOrEqual(MAX_URL);
      const q = query(url);
      const title = `T${'a'.repeat(pad)}`;
      if (q.details !== more) {
        // Every letter that fits: the URL is exactly MAX_URL long.
        expect([pad, q.details.replace(/^d+/, 'd'), url.length]).toEqual([pad, `d${suffix}`, MAX_URL]);
        seen.add('description cut');
      } else if (q.location === location) {
        expect(q.text).toBe(title);
        // Not a character of the description would fit.
        expect(url.length - encodeURIComponent(more).length + encodeURIComponent(`d${suffix}`).length).toBeGreaterThan(MAX_URL);
        seen.add('link alone');
      } else if (q.location !== undefined) {
        expect(q.text).toBe(title);
        // A prefix, without the space before the …
        expect(q.location).toMatch(/\S…$/);
        expect(location.startsWith(q.location.slice(0, -1))).toBe(true);
        seen.add('location cut');
      } else if (q.text === title) {
        seen.add('location left out');
      } else {
        expect(q.text.endsWith('…')).toBe(true);
        expect(title.startsWith(q.text.slice(0, -1))).toBe(true);
        // The longest title that fits: one letter more would not.
        expect(url.length).toBe(MAX_URL);
        seen.add('title cut');
      }
    }
    expect([...seen]).toEqual(['description cut', 'link alone', 'location cut', 'location left out', 'title cut']);
  });

  it('drops the link back when a page URL of nearly MAX_URL characters leaves no room for it', () => {
    // Not even a title of … fits beside that link: the title is …, and the link goes too.
    const pageUrl = `https://cal.example/e/${'p'.repeat(MAX_URL - 40)}`;
    const url = google(event({ pageUrl, title: 'Title', location: 'Room', descriptionHtml: `<p>${'Notes '.repeat(400)}</p>` }));
    expect(url.length).toBeLessThanOrEqual(MAX_URL);
    expect(query(url)).toEqual({ action: 'TEMPLATE', text: '…', dates: '20260714T170000/20260714T180000', ctz: 'UTC' });
  });
});

describe('a subscribe URL with a long name', () => {
  const feed = 'https://cal.example/feeds/abc.ics';
  const outlook = (name: string, feedUrl = feed) => subscribeUrls(feedUrl, name).outlook_web;
  /** URL characters for the name's kept part and its … (%E2%80%A6, nine characters). */
  const room = MAX_URL - outlook('').length - encodeURIComponent('…').length;

  it('is whole at exactly MAX_URL characters, and cut to exactly MAX_URL a letter longer', () => {
    const whole = 'n'.repeat(MAX_URL - outlook('').length);
    expect(outlook(whole).length).toBe(MAX_URL);
    expect(query(outlook(whole)).name).toBe(whole);
    const cut = outlook(`${whole}n`);
    expect(cut.length).toBe(MAX_URL);
    expect(query(cut).name).toBe(`${'n'.repeat(room)}…`);
  });

  it('keeps no space before the …', () => {
    const name = `${'n'.repeat(room - 3)} ${'m'.repeat(100)}`; // the space (%20) is the last that fits
    expect(query(outlook(name)).name).toBe(`${'n'.repeat(room - 3)}…`);
  });

  it('is left empty when not even the … fits beside the feed', () => {
    const feedUrl = `https://cal.example/feeds/${'f'.repeat(MAX_URL - 80)}.ics`;
    const fixed = outlook('', feedUrl).length;
    const longFeed = `https://cal.example/feeds/${'f'.repeat(MAX_URL - 80 + MAX_URL - fixed - 5)}.ics`;
    expect(outlook('', longFeed).length).toBe(MAX_URL - 5);
    expect(query(outlook('Team events', longFeed))).toEqual({ url: longFeed, name: '' });
  });
});

describe('the description of an add-event URL', () => {
  const view = (over: Partial<EventView>): EventView => ({
    uid: 'ev1',
    title: 'T',
    descriptionHtml: null,
    location: null,
    locationUrl: null,
    imageUrl: null,
    startMs: Date.parse('2026-07-14T17:00:00Z'),
    endMs: Date.parse('2026-07-14T18:00:00Z'),
    isAllDay: false,
    timezone: 'UTC',
    recurrenceRule: null,
    reminderBefore: null,
    busyType: null,
    sequence: 0,
    updatedMs: 0,
    pageUrl: PAGE,
    ...over,
  });
  const body = (v: EventView) => unHtml(query(WEB_PLATFORMS.outlook_web(v)).body ?? '');

  it('carries the online location after the text, unless it is the location itself', () => {
    const meet = 'https://meet.example/abc';
    // Without a location, the online one is the location, and in the description too.
    expect(query(WEB_PLATFORMS.google(view({ location: null, locationUrl: meet, descriptionHtml: '<p>Notes</p>' })))).toMatchObject({ location: meet, details: `Notes\n\n${meet}` });
    expect(query(WEB_PLATFORMS.google(view({ location: meet, locationUrl: meet })))).toMatchObject({ location: meet });
    expect(query(WEB_PLATFORMS.google(view({ location: meet, locationUrl: meet }))).details).toBeUndefined();
    expect(query(WEB_PLATFORMS.google(view({ location: 'Room 1', locationUrl: meet, descriptionHtml: '<p>Notes</p>' })))).toMatchObject({
      location: 'Room 1',
      details: `Notes\n\n${meet}`,
    });
  });

  it('reads a rule out in Outlook, and says nothing of one no reader can put in words', () => {
    expect(body(view({ recurrenceRule: 'FREQ=WEEKLY;COUNT=3', descriptionHtml: '<p>Notes</p>' }))).toBe('Repeats every week, 3 times.\n\nNotes');
    expect(body(view({ recurrenceRule: 'FREQ=FORTNIGHTLY;COUNT=3', descriptionHtml: '<p>Notes</p>' }))).toBe('Notes');
  });
});
