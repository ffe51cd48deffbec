import { buildIcs, type IcsEvent } from '../../shared/calendar/ics';

// The VTIMEZONE lines name the years asked for, so each file shows the span it was given.
jest.mock('../../shared/calendar/vtimezone', () => ({
  ...jest.requireActual('../../shared/calendar/vtimezone'),
  vtimezoneLines: (zone: string, span: { from: number; to: number }) => ['BEGIN:VTIMEZONE', `TZID:${zone}`, `X-SPAN:${span.from}-${span.to}`, 'END:VTIMEZONE'],
}));

const at = (iso: string) => Date.parse(iso);
const event = (over: Partial<IcsEvent> = {}): IcsEvent => ({
  uid: 'u1',
  sequence: 0,
  title: 'T',
  descriptionHtml: null,
  location: null,
  url: null,
  startMs: at('2026-07-14T17:00:00Z'),
  endMs: at('2026-07-14T18:00:00Z'),
  isAllDay: false,
  timezone: 'America/New_York',
  recurrenceRule: null,
  reminderBefore: null,
  busyType: null,
  updatedMs: at('2026-06-01T08:00:00Z'),
  ...over,
});

/** `zone from-to` of each VTIMEZONE in the file. */
const spans = (events: IcsEvent[]) =>
  [...buildIcs(events, { uidHost: 'h' }).matchAll(/TZID:(.+)\r\nX-SPAN:(\d+-\d+)/g)].map((m) => `${m[1]} ${m[2]}`);
const spanOf = (rule: string | null, over: Partial<IcsEvent> = {}) => spans([event({ recurrenceRule: rule, ...over })])[0];
const horizon = (startYear = 2026) => Math.max(startYear, new Date().getUTCFullYear()) + 30;

describe('the years a VTIMEZONE covers', () => {
  it('are the years of a single event, none for all-day or UTC events', () => {
    expect(spans([event()])).toEqual(['America/New_York 2026-2026']);
    expect(spanOf(null, { endMs: at('2027-01-02T00:00:00Z') })).toBe('America/New_York 2026-2027');
    // An end before the start counts as the start.
    expect(spanOf(null, { endMs: at('2025-01-01T00:00:00Z') })).toBe('America/New_York 2026-2026');
    expect(spans([event({ isAllDay: true }), event({ timezone: 'UTC' })])).toEqual([]);
  });

  it('join the events of one zone, each zone its own', () => {
    const events = [
      event({ startMs: at('2030-03-01T00:00:00Z'), endMs: at('2030-03-01T01:00:00Z') }),
      event({ startMs: at('2024-03-01T00:00:00Z'), endMs: at('2024-03-01T01:00:00Z') }),
      event({ timezone: 'Europe/Paris', startMs: at('2027-03-01T00:00:00Z'), endMs: at('2027-03-01T01:00:00Z') }),
      event({ startMs: at('2026-03-01T00:00:00Z'), endMs: at('2026-03-01T01:00:00Z') }),
    ];
    expect(spans(events)).toEqual(['America/New_York 2024-2030', 'Europe/Paris 2027-2027']);
  });

  it('run to the year after UNTIL, never past the horizon', () => {
    expect(spanOf('FREQ=WEEKLY;UNTIL=20301231T000000Z')).toBe('America/New_York 2026-2031');
    expect(spanOf('FREQ=WEEKLY;UNTIL=22001231T000000Z')).toBe(`America/New_York 2026-${horizon()}`);
    expect(spanOf('FREQ=DAILY')).toBe(`America/New_York 2026-${horizon()}`);
    // An old start: the horizon is counted from now.
    expect(spanOf('FREQ=DAILY', { startMs: at('2000-01-01T12:00:00Z'), endMs: at('2000-01-01T13:00:00Z') })).toBe(`America/New_York 2000-${horizon(2000)}`);
  });

  it('run as far as COUNT periods can reach, when every period has an occurrence', () => {
    // (COUNT-1) × INTERVAL × periods between occurrences × the longest period, in years, rounded up, plus one.
    expect(spanOf('FREQ=WEEKLY;COUNT=10')).toBe('America/New_York 2026-2028'); // 63 days
    expect(spanOf('FREQ=WEEKLY;COUNT=60')).toBe('America/New_York 2026-2029'); // 413 days
    expect(spanOf('FREQ=WEEKLY;INTERVAL=2;COUNT=30')).toBe('America/New_York 2026-2029'); // 406 days
    expect(spanOf('FREQ=WEEKLY;COUNT=53')).toBe('America/New_York 2026-2028'); // 364 days
    expect(spanOf('FREQ=DAILY;COUNT=366')).toBe('America/New_York 2026-2028'); // 365 days
    expect(spanOf('FREQ=DAILY;COUNT=367')).toBe('America/New_York 2026-2029'); // 366 days
    expect(spanOf('FREQ=HOURLY;COUNT=10')).toBe('America/New_York 2026-2028');
    expect(spanOf('FREQ=MINUTELY;COUNT=1000000')).toBe('America/New_York 2026-2029'); // 694 days
    expect(spanOf('FREQ=SECONDLY;COUNT=40000000')).toBe('America/New_York 2026-2029'); // 463 days
    // A DTSTART on the 31st skips months: two months between occurrences.
    expect(spanOf('FREQ=MONTHLY;COUNT=7')).toBe('America/New_York 2026-2029'); // 6 × 2 × 31 days
    // On 29 February, eight years between occurrences.
    expect(spanOf('FREQ=YEARLY;COUNT=2')).toBe('America/New_York 2026-2036'); // 8 × 366 days
    expect(spanOf('FREQ=YEARLY;COUNT=1')).toBe('America/New_York 2026-2027');
    // A long event reaches past its occurrences' span.
    expect(spanOf('FREQ=DAILY;COUNT=2', { endMs: at('2031-01-01T00:00:00Z') })).toBe('America/New_York 2026-2031');
    // COUNT beyond the horizon stops at the horizon.
    expect(spanOf('FREQ=YEARLY;COUNT=1000')).toBe(`America/New_York 2026-${horizon()}`);
  });

  it('read the BY parts: a period each only for weekdays and dates every period has', () => {
    expect(spanOf('FREQ=WEEKLY;BYDAY=MO,WE;COUNT=60')).toBe('America/New_York 2026-2029');
    expect(spanOf('FREQ=MONTHLY;BYDAY=2TU;COUNT=13')).toBe('America/New_York 2026-2029'); // 12 × 31 days
    expect(spanOf('FREQ=MONTHLY;BYDAY=MO,-4SU,+1FR;COUNT=12')).toBe('America/New_York 2026-2028'); // 11 × 31 days
    expect(spanOf('FREQ=MONTHLY;BYMONTHDAY=28,-28;COUNT=12')).toBe('America/New_York 2026-2028');
    // One day every month has is enough for a period each, whatever the others.
    expect(spanOf('FREQ=MONTHLY;BYDAY=1MO,5FR;COUNT=12')).toBe('America/New_York 2026-2028');
    expect(spanOf('FREQ=MONTHLY;BYDAY=TU,TH;COUNT=30')).toBe('America/New_York 2026-2030'); // 29 × 31 days
    expect(spanOf('FREQ=MONTHLY;BYMONTHDAY=31,15;COUNT=12')).toBe('America/New_York 2026-2028');
    expect(spanOf('FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29,1;COUNT=3')).toBe('America/New_York 2026-2030');
    expect(spanOf('FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU;COUNT=3')).toBe('America/New_York 2026-2030'); // 2 × 366 days
    expect(spanOf('FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=1;COUNT=3')).toBe('America/New_York 2026-2030');
    expect(spanOf('FREQ=YEARLY;BYDAY=1MO;COUNT=3')).toBe('America/New_York 2026-2030');
    // Periods that may have none: the horizon.
    for (const rule of [
      'FREQ=MONTHLY;BYDAY=5FR;COUNT=3',
      'FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=13;COUNT=3',
      'FREQ=MONTHLY;BYMONTHDAY=31;COUNT=3',
      'FREQ=MONTHLY;BYMONTHDAY=-29;COUNT=3',
      'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;COUNT=3',
      'FREQ=YEARLY;BYMONTH=2;BYDAY=5SU;COUNT=3',
      // BYMONTH alone: DTSTART's day of the month, which that month may lack (30 February).
      'FREQ=YEARLY;BYMONTH=2;COUNT=3',
      'FREQ=YEARLY;BYWEEKNO=53;COUNT=3',
      'FREQ=WEEKLY;BYMONTH=2;COUNT=3',
      'FREQ=DAILY;BYMONTH=2;COUNT=3',
      // A weekday or a date of the month each day or hour: most periods have none.
      'FREQ=DAILY;BYDAY=MO;COUNT=3',
      'FREQ=HOURLY;BYDAY=1MO;COUNT=3',
      'FREQ=DAILY;BYMONTHDAY=1;COUNT=3',
      'FREQ=HOURLY;BYMONTHDAY=-1;COUNT=3',
      'FREQ=FORTNIGHTLY;COUNT=3',
      'COUNT=3',
    ]) {
      expect([rule, spanOf(rule)]).toEqual([rule, `America/New_York 2026-${horizon()}`]);
    }
  });
});
