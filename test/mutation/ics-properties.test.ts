import ICAL from 'ical.js';
import { buildIcs, icsHead, type IcsAttendee, type IcsEvent, type IcsOptions } from '../../shared/calendar/ics';
import { readWithIcalJs } from '../helpers/ics-readers';

/*
 * The properties of our files as calendar clients read them: each file is parsed back by
 * ical.js (Thunderbird's parser), and the values compared with what RFC 5545 (and RFC 7986
 * for REFRESH-INTERVAL, RFC 5546 for iTIP) says they mean.
 */

const at = (iso: string) => Date.parse(iso);
let serial = 0;
/** An event with a uid of its own, so no file of another test shares its VEVENT. */
const event = (over: Partial<IcsEvent> = {}): IcsEvent => ({
  uid: `p${++serial}`,
  sequence: 0,
  title: 'Standup',
  descriptionHtml: null,
  location: null,
  url: null,
  startMs: at('2026-07-14T17:00:00Z'),
  endMs: at('2026-07-14T18:00:00Z'),
  isAllDay: false,
  timezone: 'UTC',
  recurrenceRule: null,
  reminderBefore: null,
  busyType: null,
  updatedMs: at('2026-06-01T08:00:00Z'),
  ...over,
});

// ical.js reads properties it does not know as raw text; X-PUBLISHED-TTL is a DURATION.
(ICAL.design.icalendar.property as Record<string, { defaultType: string }>)['x-published-ttl'] = { defaultType: 'duration' };

const calendarOf = (text: string) => new ICAL.Component(ICAL.parse(text));
const veventOf = (text: string) => calendarOf(text).getFirstSubcomponent('vevent') as ICAL.Component;
const value = (text: string, name: string) => veventOf(text).getFirstPropertyValue(name);
const seconds = (v: unknown) => (v as ICAL.Duration).toSeconds();
const utc = (v: unknown) => (v as ICAL.Time).toJSDate().toISOString();

describe('the calendar', () => {
  it('names its version and product (RFC 5545 3.7.3, 3.7.4: both required)', () => {
    const cal = calendarOf(buildIcs([event()], { uidHost: 'cal.example' }));
    expect(cal.getFirstPropertyValue('version')).toBe('2.0');
    expect(cal.getFirstPropertyValue('prodid')).toBe('-//calendar-service//events//EN');
    expect(buildIcs([], { uidHost: 'h' })).toBe('BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calendar-service//events//EN\r\nEND:VCALENDAR\r\n');
  });

  it('asks subscribers to refresh a feed at its interval (RFC 7986 5.7 and the X-PUBLISHED-TTL of Outlook)', () => {
    const text = buildIcs([event()], { uidHost: 'h', refreshMinutes: 90 });
    // RFC 7986 requires the VALUE parameter.
    expect(text).toContain('\r\nREFRESH-INTERVAL;VALUE=DURATION:PT90M\r\n');
    const cal = calendarOf(text);
    expect(seconds(cal.getFirstPropertyValue('refresh-interval'))).toBe(5400);
    expect(seconds(cal.getFirstPropertyValue('x-published-ttl'))).toBe(5400);
    const plain = calendarOf(buildIcs([event()], { uidHost: 'h' }));
    expect(plain.getFirstProperty('refresh-interval')).toBeNull();
    expect(plain.getFirstProperty('x-published-ttl')).toBeNull();
  });
});

describe('the VTIMEZONEs of a file', () => {
  it('describe each zone of its timed events, none for a zone the runtime does not know', () => {
    const dates = (timezone: string) => ({ timezone, isAllDay: false, startMs: at('2026-07-14T17:00:00Z'), endMs: at('2026-07-14T18:00:00Z'), recurrenceRule: null });
    const head = icsHead([dates('Europe/Paris'), dates('Mars/Olympus_Mons'), dates('Asia/Tokyo')], { uidHost: 'h' });
    const zones = calendarOf(`${head}END:VCALENDAR\r\n`).getAllSubcomponents('vtimezone');
    expect(zones.map((z) => z.getFirstPropertyValue('tzid'))).toEqual(['Europe/Paris', 'Asia/Tokyo']);
    // Nothing in its place: every line one of the calendar's or of a VTIMEZONE's.
    const names = head.split('\r\n').slice(0, -1).map((l) => l.split(/[:;]/)[0]);
    expect(new Set(names)).toEqual(new Set(['BEGIN', 'END', 'VERSION', 'PRODID', 'TZID', 'X-LIC-LOCATION', 'TZNAME', 'TZOFFSETFROM', 'TZOFFSETTO', 'DTSTART', 'RRULE']));
  });
});

describe('an event', () => {
  it('has the UID every file, feed and message gives it', () => {
    const e = event({ uid: 'AbCd1234' });
    for (const opts of [{}, { method: 'REQUEST' }, { method: 'CANCEL' }] as Partial<IcsOptions>[]) {
      expect(readWithIcalJs(buildIcs([e], { uidHost: 'cal.example', ...opts }))[0].uid).toBe('evt_AbCd1234@cal.example');
    }
  });

  it('links its page: URL, and the link after the description text', () => {
    const url = 'https://cal.example/e/x1';
    const both = buildIcs([event({ url, descriptionHtml: '<p>Bring <b>snacks</b></p>' })], { uidHost: 'h' });
    expect(value(both, 'url')).toBe(url);
    expect(value(both, 'description')).toBe(`Bring snacks\n\n${url}`);
    // No description: the link alone; no link: the text alone; neither: no DESCRIPTION.
    const linkOnly = buildIcs([event({ url })], { uidHost: 'h' });
    expect(value(linkOnly, 'url')).toBe(url);
    expect(value(linkOnly, 'description')).toBe(url);
    const textOnly = buildIcs([event({ descriptionHtml: '<p>Bring snacks</p>' })], { uidHost: 'h' });
    expect(value(textOnly, 'description')).toBe('Bring snacks');
    expect(value(textOnly, 'url')).toBeNull();
    expect(value(buildIcs([event()], { uidHost: 'h' }), 'description')).toBeNull();
  });

  it('says when it was created and last changed', () => {
    const text = buildIcs([event({ createdMs: at('2026-05-02T10:20:30Z'), updatedMs: at('2026-06-01T08:00:00Z') })], { uidHost: 'h' });
    expect(utc(value(text, 'created'))).toBe('2026-05-02T10:20:30.000Z');
    expect(utc(value(text, 'last-modified'))).toBe('2026-06-01T08:00:00.000Z');
    expect(utc(value(text, 'dtstamp'))).toBe('2026-06-01T08:00:00.000Z');
    expect(value(buildIcs([event()], { uidHost: 'h' }), 'created')).toBeNull();
  });

  it('blocks time when busy, not when free, and says nothing when not set (TRANSP, 3.8.2.7)', () => {
    expect(value(buildIcs([event({ busyType: 'busy' })], { uidHost: 'h' }), 'transp')).toBe('OPAQUE');
    expect(value(buildIcs([event({ busyType: 'free' })], { uidHost: 'h' }), 'transp')).toBe('TRANSPARENT');
    expect(value(buildIcs([event({ busyType: null })], { uidHost: 'h' }), 'transp')).toBeNull();
  });

  it('is CANCELLED when cancelled, CONFIRMED in a request, and has no STATUS otherwise (3.8.1.11)', () => {
    const status = (over: Partial<IcsEvent>, opts: Partial<IcsOptions>) => value(buildIcs([event(over)], { uidHost: 'h', ...opts }), 'status');
    expect(status({ cancelled: true }, { method: 'CANCEL' })).toBe('CANCELLED');
    expect(status({ cancelled: true }, {})).toBe('CANCELLED');
    expect(status({ cancelled: true }, { method: 'REQUEST' })).toBe('CANCELLED');
    expect(status({}, { method: 'REQUEST' })).toBe('CONFIRMED');
    expect(status({}, { method: 'PUBLISH' })).toBeNull();
    expect(status({}, {})).toBeNull();
  });

  it('reminds that many minutes before its start (VALARM, TRIGGER as in 3.8.6.3: -PT15M)', () => {
    const text = buildIcs([event({ title: 'Dentist', reminderBefore: 15 })], { uidHost: 'h' });
    expect(text).toContain('BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nDESCRIPTION:Dentist\r\nEND:VALARM\r\n');
    const trigger = (minutes: number) => {
      const alarm = veventOf(buildIcs([event({ reminderBefore: minutes })], { uidHost: 'h' })).getFirstSubcomponent('valarm') as ICAL.Component;
      expect(alarm.getFirstPropertyValue('action')).toBe('DISPLAY');
      return seconds(alarm.getFirstPropertyValue('trigger'));
    };
    expect(trigger(15)).toBe(-900);
    expect(trigger(90)).toBe(-5400);
    expect(trigger(1440)).toBe(-86400);
    expect(trigger(0)).toBe(0);
    expect(veventOf(buildIcs([event()], { uidHost: 'h' })).getFirstSubcomponent('valarm')).toBeNull();
  });

  it('all day: its dates, DTEND the day after the last (3.6.1), in any zone', () => {
    for (const timezone of ['UTC', 'Pacific/Kiritimati', 'America/Los_Angeles']) {
      // 7 to 8 March 2026, the second day the one US clocks go forward.
      const text = buildIcs([event({ isAllDay: true, timezone, startMs: at('2026-03-07T00:00:00Z'), endMs: at('2026-03-08T00:00:00Z') })], { uidHost: 'h' });
      const start = value(text, 'dtstart') as ICAL.Time;
      const end = value(text, 'dtend') as ICAL.Time;
      expect([timezone, start.isDate, start.toString(), end.isDate, end.toString()]).toEqual([timezone, true, '2026-03-07', true, '2026-03-09']);
    }
    expect(buildIcs([event({ isAllDay: true, startMs: at('2026-12-31T00:00:00Z'), endMs: at('2026-12-31T00:00:00Z') })], { uidHost: 'h' })).toContain(
      'DTSTART;VALUE=DATE:20261231\r\nDTEND;VALUE=DATE:20270101\r\n',
    );
  });

  it('in a zone whose offset had seconds (Monrovia until 1972, -00:44:30) is read back at its instant', () => {
    // The VTIMEZONE gives offsets to the minute (-0044): the wall time written beside the TZID
    // is the one that offset gives, so a reader finds the event's instant again.
    const startMs = at('1960-06-15T12:00:00Z');
    const text = buildIcs([event({ timezone: 'Africa/Monrovia', startMs, endMs: startMs + 3_600_000 })], { uidHost: 'h' });
    expect(text).toContain('TZOFFSETTO:-0044');
    expect(text).toContain('DTSTART;TZID=Africa/Monrovia:19600615T111600\r\n');
    expect(new Date(readWithIcalJs(text)[0].startMs).toISOString()).toBe('1960-06-15T12:00:00.000Z');
    // Whole-minute offsets (today's Monrovia, GMT) are read as they are.
    const now = at('2026-06-15T12:00:00Z');
    expect(readWithIcalJs(buildIcs([event({ timezone: 'Africa/Monrovia', startMs: now, endMs: now + 3_600_000 })], { uidHost: 'h' }))[0].startMs).toBe(now);
  });
});

describe('an event in the hour repeated when clocks go back', () => {
  // 1 November 2026, New York: 01:00-02:00 is lived twice, first EDT (05:00Z-06:00Z) then EST
  // (06:00Z-07:00Z). A wall time in that hour names two instants, so a single event that starts
  // or ends in it is written in UTC; ical.js reads each back at its instant.
  const ny = (startIso: string, endIso: string, recurrenceRule: string | null = null) =>
    buildIcs([event({ timezone: 'America/New_York', startMs: at(startIso), endMs: at(endIso), recurrenceRule })], { uidHost: 'h' });
  /** The VEVENT's DTSTART or DTEND line (the VTIMEZONE has DTSTARTs of its own). */
  const dateLine = (text: string, name: string) => text.slice(text.indexOf('BEGIN:VEVENT')).split('\r\n').find((l) => l.startsWith(name));
  const startLine = (text: string) => dateLine(text, 'DTSTART');
  const endLine = (text: string) => dateLine(text, 'DTEND');

  it('ending in it (starting before): both dates in UTC', () => {
    const text = ny('2026-11-01T04:45:00Z', '2026-11-01T05:45:00Z');
    expect([startLine(text), endLine(text)]).toEqual(['DTSTART:20261101T044500Z', 'DTEND:20261101T054500Z']);
    expect(utc(value(text, 'dtend'))).toBe('2026-11-01T05:45:00.000Z');
  });

  it('starting in it (ending after): both dates in UTC', () => {
    const text = ny('2026-11-01T06:15:00Z', '2026-11-01T07:15:00Z');
    expect([startLine(text), endLine(text)]).toEqual(['DTSTART:20261101T061500Z', 'DTEND:20261101T071500Z']);
    expect(utc(value(text, 'dtstart'))).toBe('2026-11-01T06:15:00.000Z');
  });

  it('around it, or in a zone without one: beside its TZID', () => {
    const text = ny('2026-11-01T03:45:00Z', '2026-11-01T04:45:00Z');
    expect([startLine(text), endLine(text)]).toEqual(['DTSTART;TZID=America/New_York:20261031T234500', 'DTEND;TZID=America/New_York:20261101T004500']);
    // Tokyo has no clock changes: the same instants keep their wall time.
    const tokyo = buildIcs([event({ timezone: 'Asia/Tokyo', startMs: at('2026-11-01T05:45:00Z'), endMs: at('2026-11-01T06:45:00Z') })], { uidHost: 'h' });
    expect(startLine(tokyo)).toBe('DTSTART;TZID=Asia/Tokyo:20261101T144500');
  });

  it('recurring: keeps its wall time, so its later occurrences follow the zone', () => {
    const text = ny('2026-11-01T04:45:00Z', '2026-11-01T05:45:00Z', 'FREQ=DAILY;COUNT=2');
    expect([startLine(text), endLine(text)]).toEqual(['DTSTART;TZID=America/New_York:20261101T004500', 'DTEND;TZID=America/New_York:20261101T014500']);
    // 00:45 on 2 November is EST.
    expect(readWithIcalJs(text)[0].occurrencesMs).toEqual([at('2026-11-01T04:45:00Z'), at('2026-11-02T05:45:00Z')]);
  });
});

describe('attendees of an iTIP message (RFC 5546)', () => {
  const attendees = (method: IcsOptions['method'], list: IcsAttendee[]) =>
    veventOf(buildIcs([event()], { uidHost: 'h', method, organizer: { name: 'Org', email: 'org@cal.example' }, attendees: list }))
      .getAllProperties('attendee')
      .map((p) => ({ to: p.getFirstValue(), rsvp: p.getParameter('rsvp') ?? null, partstat: p.getParameter('partstat') ?? null, cn: p.getParameter('cn') ?? null }));

  it('asks for a reply only in a request, from those who have not answered', () => {
    expect(attendees('REQUEST', [{ email: 'ann@example.com', name: 'Ann' }, { email: 'bob@example.com', answer: 'TENTATIVE' }])).toEqual([
      { to: 'MAILTO:ann@example.com', rsvp: 'TRUE', partstat: null, cn: 'Ann' },
      { to: 'MAILTO:bob@example.com', rsvp: 'FALSE', partstat: 'TENTATIVE', cn: null },
    ]);
    for (const method of ['PUBLISH', 'CANCEL'] as const) {
      expect(attendees(method, [{ email: 'ann@example.com' }]).map((a) => [a.rsvp, a.partstat])).toEqual([['FALSE', null]]);
    }
  });

  it('carries each answer as PARTSTAT', () => {
    for (const answer of ['ACCEPTED', 'TENTATIVE', 'DECLINED'] as const) {
      for (const method of ['REQUEST', 'PUBLISH'] as const) {
        expect(attendees(method, [{ email: 'ann@example.com', answer }]).map((a) => [a.rsvp, a.partstat])).toEqual([['FALSE', answer]]);
      }
    }
  });
});

describe('the same event in a published file and in messages', () => {
  // A feed remembers its VEVENTs; a message (METHOD, ORGANIZER, ATTENDEEs, its own DTSTAMP)
  // must never get a published one, nor a published file one written for a message.
  const stamp = at('2026-07-01T09:30:00Z');
  const variants: [string, Partial<IcsOptions>][] = [
    ['published', {}],
    ['PUBLISH', { method: 'PUBLISH' }],
    ['REQUEST', { method: 'REQUEST' }],
    ['CANCEL', { method: 'CANCEL' }],
    ['organizer', { organizer: { name: 'Org', email: 'org@cal.example' } }],
    ['other organizer', { organizer: { name: 'Other', email: 'other@cal.example' } }],
    ['attendee', { attendees: [{ email: 'ann@example.com' }] }],
    ['other attendee', { attendees: [{ email: 'bob@example.com' }] }],
    ['no attendees', { attendees: [] }],
    ['stamp', { stampMs: stamp }],
    ['other stamp', { stampMs: stamp + 60_000 }],
  ];

  /** What a client reads from each file: the properties that differ between the variants. */
  function read(text: string) {
    const cal = calendarOf(text);
    const vevent = cal.getFirstSubcomponent('vevent') as ICAL.Component;
    return {
      method: cal.getFirstPropertyValue('method'),
      status: vevent.getFirstPropertyValue('status'),
      organizer: vevent.getFirstPropertyValue('organizer'),
      attendees: vevent.getAllProperties('attendee').map((p) => `${p.getFirstValue()} RSVP=${p.getParameter('rsvp')}`),
      stamp: utc(vevent.getFirstPropertyValue('dtstamp')),
    };
  }
  function expected(opts: Partial<IcsOptions>) {
    return {
      method: opts.method ?? null,
      status: opts.method === 'REQUEST' ? 'CONFIRMED' : null,
      organizer: opts.organizer ? `mailto:${opts.organizer.email}` : null,
      attendees: (opts.attendees ?? []).map((a) => `MAILTO:${a.email} RSVP=${opts.method === 'REQUEST' ? 'TRUE' : 'FALSE'}`),
      stamp: new Date(opts.stampMs ?? at('2026-06-01T08:00:00Z')).toISOString(),
    };
  }

  it('is right in each file, whichever was written first', () => {
    // Every ordered pair of variants, each pair with an event of its own.
    for (const [firstName, first] of variants) {
      for (const [secondName, second] of variants) {
        if (first === second) continue;
        const e = event();
        const one = read(buildIcs([e], { uidHost: 'h', ...first }));
        const two = read(buildIcs([e], { uidHost: 'h', ...second }));
        expect([firstName, one]).toEqual([firstName, expected(first)]);
        expect([`${secondName} after ${firstName}`, two]).toEqual([`${secondName} after ${firstName}`, expected(second)]);
      }
    }
  });

  it('is the same published VEVENT every time, and another for another host', () => {
    const e = event({ descriptionHtml: '<p>Notes</p>', reminderBefore: 10, busyType: 'busy' });
    const first = buildIcs([e], { uidHost: 'h' });
    expect(buildIcs([{ ...e }], { uidHost: 'h' })).toBe(first);
    expect(readWithIcalJs(buildIcs([e], { uidHost: 'other.example' }))[0].uid).toBe(`evt_${e.uid}@other.example`);
    // A change to the event is a new VEVENT.
    expect(value(buildIcs([{ ...e, title: 'Renamed' }], { uidHost: 'h' }), 'summary')).toBe('Renamed');
  });
});
