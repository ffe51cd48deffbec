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
