import ical from 'node-ical';
import { buildIcs, type IcsEvent } from '../../shared/calendar/ics';
import { readWithIcalJs } from '../helpers/ics-readers';

const base: IcsEvent = {
  uid: 'AbCdEfGh12345678',
  sequence: 2,
  title: 'Launch, party; "big" \\ one',
  descriptionHtml: '<p>Line one</p><p>Line two with a fairly long sentence that will certainly need folding at seventy five octets ééé</p>',
  location: 'HQ\nSecond floor',
  url: 'https://cal.example.com/e/AbCdEfGh12345678',
  startMs: Date.parse('2026-07-14T17:00:00Z'),
  endMs: Date.parse('2026-07-14T18:30:00Z'),
  isAllDay: false,
  timezone: 'America/New_York',
  recurrenceRule: null,
  reminderBefore: 15,
  busyType: 'free',
  updatedMs: Date.parse('2026-06-01T08:00:00Z'),
};

const parse = (text: string) => Object.values(ical.sync.parseICS(text)).filter((c) => c?.type === 'VEVENT') as ical.VEvent[];

describe('ICS', () => {
  it('writes CRLF lines folded at 75 octets, no outside URLs but the event page', () => {
    const text = buildIcs([base], { uidHost: 'cal.example.com' });
    expect(text).toMatch(/^BEGIN:VCALENDAR\r\n/);
    expect(text).toMatch(/\r\nEND:VCALENDAR\r\n$/);
    const lines = text.split('\r\n');
    for (const line of lines) expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(75);
    expect(text).not.toMatch(/\n(?<!\r\n)/);
    expect(text).not.toContain('tzurl.org');
    expect(text).toContain('DTSTAMP:20260601T080000Z');
    expect(text).toContain('DTSTART;TZID=America/New_York:20260714T130000');
    expect(text).toMatch(/BEGIN:VTIMEZONE\r\nTZID:America\/New_York/);
  });

  it('escapes a lone CR in the calendar name too: no value starts a line of its own', () => {
    const text = buildIcs([base], { uidHost: 'h', calendarName: 'Bare\rX-INJ:evil\rBEGIN:VEVENT\u0007 ok' });
    expect(text).not.toMatch(/\r(?!\n)/);
    expect(text.split('\r\n').filter((line) => /^(X-INJ|BEGIN:VEVENT)/.test(line))).toEqual(['BEGIN:VEVENT']);
    expect(text).toContain('X-WR-CALNAME:Bare\\nX-INJ:evil\\nBEGIN:VEVENT ok');
  });

  it('reads back with a real parser: times, zone, escaping, alarm, transparency', () => {
    const [e] = parse(buildIcs([base], { uidHost: 'cal.example.com' }));
    expect(e.uid).toBe('evt_AbCdEfGh12345678@cal.example.com');
    expect(e.summary).toBe('Launch, party; "big" \\ one');
    expect(e.location).toBe('HQ\nSecond floor');
    expect(e.start.toISOString()).toBe('2026-07-14T17:00:00.000Z');
    expect(e.end?.toISOString()).toBe('2026-07-14T18:30:00.000Z');
    expect((e.start as { tz?: string }).tz).toBe('America/New_York');
    expect(Number(e.sequence)).toBe(2);
    expect(e.transparency).toBe('TRANSPARENT');
    expect(e.description).toContain('Line one\n\nLine two with a fairly long sentence');
    expect(e.description).toContain('https://cal.example.com/e/AbCdEfGh12345678');
    const text = buildIcs([base], { uidHost: 'cal.example.com' });
    expect(text).toMatch(/BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M/);
  });

  it('writes all-day events as dates with the exclusive next day as DTEND', () => {
    const text = buildIcs(
      [{ ...base, isAllDay: true, startMs: Date.parse('2026-04-14T00:00:00Z'), endMs: Date.parse('2026-04-16T00:00:00Z') }],
      { uidHost: 'h' },
    );
    expect(text).toContain('DTSTART;VALUE=DATE:20260414');
    expect(text).toContain('DTEND;VALUE=DATE:20260417');
    const [e] = parse(text);
    expect(e.datetype).toBe('date');
  });

  it('keeps a weekly recurrence on its wall time across DST (RRULE with TZID)', () => {
    const [e] = parse(buildIcs([{ ...base, recurrenceRule: 'FREQ=WEEKLY;COUNT=12' }], { uidHost: 'h' }));
    const dates = e.rrule!.all().map((d) => d.toISOString());
    expect(dates).toHaveLength(12);
    // Every occurrence at 13:00 New York: 17:00Z in summer, 18:00Z after 1 November.
    expect(dates.filter((d) => d.endsWith('T17:00:00.000Z')).length + dates.filter((d) => d.endsWith('T18:00:00.000Z')).length).toBe(12);
  });

  it('gives each zone a VTIMEZONE for the years of its dates: events, recurrences, a feed', () => {
    // Cairo's changes follow no yearly rule for long: summer dates far ahead are read right
    // only when the VTIMEZONE reaches them.
    const cairo = { ...base, timezone: 'Africa/Cairo', startMs: Date.parse('2027-07-15T12:00:00Z'), endMs: Date.parse('2027-07-15T13:00:00Z') };
    const lastYear = (text: string) => Math.max(...[...text.matchAll(/\r\nDTSTART:(\d{4})/g)].map((m) => Number(m[1])));
    const occurrences = (rule: string) => readWithIcalJs(buildIcs([{ ...cairo, recurrenceRule: rule }], { uidHost: 'h' }), 50)[0].occurrencesMs ?? [];
    // Every 15 July at 15:00 Cairo summer time (+03:00) is 12:00Z.
    const julys = (rule: string) => occurrences(rule).map((ms) => new Date(ms).toISOString().slice(4));
    expect(new Set(julys('FREQ=YEARLY;UNTIL=20450101T000000Z'))).toEqual(new Set(['-07-15T12:00:00.000Z']));
    expect(julys('FREQ=YEARLY;UNTIL=20450101T000000Z')).toHaveLength(18);
    expect(new Set(julys('FREQ=YEARLY;COUNT=25'))).toEqual(new Set(['-07-15T12:00:00.000Z']));
    // Without an end: thirty years on (from the start, or from now if later).
    const endless = julys('FREQ=YEARLY').slice(0, Math.max(2027, new Date().getUTCFullYear()) + 30 - 2027);
    expect(new Set(endless)).toEqual(new Set(['-07-15T12:00:00.000Z']));
    // No more than the years a short recurrence needs.
    expect(lastYear(buildIcs([cairo], { uidHost: 'h' }))).toBeLessThanOrEqual(2033);
    expect(lastYear(buildIcs([{ ...cairo, recurrenceRule: 'FREQ=WEEKLY;BYDAY=TH;COUNT=10' }], { uidHost: 'h' }))).toBeLessThanOrEqual(2034);
    // A feed: from its first event's year, with the rules of that time.
    const feed = buildIcs([{ ...base, uid: 'a', startMs: Date.parse('2006-03-20T15:00:00Z'), endMs: Date.parse('2006-03-20T16:00:00Z') }, base], { uidHost: 'h' });
    expect(feed.match(/BEGIN:VTIMEZONE/g)).toHaveLength(1);
    expect(feed).toContain('DTSTART:20060402T020000');
    expect(feed).toContain('DTSTART:20070311T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU');
  });

  it('writes a single event in the hour repeated when clocks go back in UTC; other times beside their TZID', () => {
    const at = (iso: string, recurrenceRule: string | null = null) =>
      buildIcs([{ ...base, startMs: Date.parse(iso), endMs: Date.parse(iso) + 3_600_000, recurrenceRule }], { uidHost: 'h' });
    // 01:30 on 1 November 2026 in New York is both 05:30Z (EDT) and 06:30Z (EST).
    expect(at('2026-11-01T05:30:00Z')).toContain('DTSTART:20261101T053000Z');
    expect(at('2026-11-01T06:30:00Z')).toContain('DTSTART:20261101T063000Z');
    expect(at('2026-11-01T03:00:00Z')).toContain('DTSTART;TZID=America/New_York:20261031T230000');
    // A recurring one keeps its wall time, so its occurrences follow the zone.
    expect(at('2026-11-01T05:30:00Z', 'FREQ=DAILY;COUNT=3')).toContain('DTSTART;TZID=America/New_York:20261101T013000');
  });

  it('writes iTIP requests and cancellations', () => {
    const request = buildIcs([base], {
      uidHost: 'h',
      method: 'REQUEST',
      organizer: { name: 'Calendar', email: 'no-reply@example.com' },
      attendees: [{ email: 'ann@example.com', name: 'Ann' }],
      stampMs: Date.parse('2026-06-02T09:00:00Z'),
    });
    expect(request).toContain('METHOD:REQUEST');
    expect(request).toContain('STATUS:CONFIRMED');
    expect(request).toContain('DTSTAMP:20260602T090000Z');
    expect(request).toMatch(/ORGANIZER;CN="Calendar":mailto:no-reply@example.com/);
    expect(request).toMatch(/ATTENDEE;ROLE=REQ-PARTICIPANT;RSVP=TRUE;CN="Ann":MAILTO:ann@example.com/);
    const cancel = buildIcs([{ ...base, cancelled: true }], { uidHost: 'h', method: 'CANCEL' });
    expect(cancel).toContain('METHOD:CANCEL');
    expect(cancel).toContain('STATUS:CANCELLED');
  });
});
