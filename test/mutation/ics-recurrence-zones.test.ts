import { DateTime } from 'luxon';
import { buildIcs, type IcsEvent } from '../../shared/calendar/ics';
import { readWithIcalJs } from '../helpers/ics-readers';

/*
 * A recurring event's file carries its zone's rules for every year its occurrences reach,
 * so a client that reads the file's own VTIMEZONE (ical.js here) puts each occurrence at its
 * wall time. New York shows it: the United States moved daylight time in 2007 (from the first
 * Sunday of April to the second of March, and from the last Sunday of October to the first of
 * November), so a series that starts in 1995 is placed right after 2007 only when its file
 * carries the changes of those years. Each occurrence is compared with the runtime's IANA
 * data (through luxon), and a few with dates known by heart.
 */

const ZONE = 'America/New_York';
const at = (iso: string) => Date.parse(iso);
let serial = 0;
/** 13:00 New York on a day of 1995 (EST, -05:00), for an hour, recurring by `rule`. */
const series = (day: string, rule: string): IcsEvent => ({
  uid: `r${++serial}`,
  sequence: 0,
  title: 'Review',
  descriptionHtml: null,
  location: null,
  url: null,
  startMs: at(`${day}T18:00:00Z`),
  endMs: at(`${day}T19:00:00Z`),
  isAllDay: false,
  timezone: ZONE,
  recurrenceRule: rule,
  reminderBefore: null,
  busyType: null,
  updatedMs: at('2026-06-01T08:00:00Z'),
});

/** Each occurrence as ical.js places it from our file, in UTC. */
const occurrences = (e: IcsEvent, limit: number) => readWithIcalJs(buildIcs([e], { uidHost: 'h' }), limit)[0].occurrencesMs ?? [];
const iso = (ms: number) => new Date(ms).toISOString().replace('.000', '');
/** Occurrences whose wall time in New York is not 13:00. */
const misplaced = (list: number[]) => list.filter((ms) => DateTime.fromMillis(ms, { zone: ZONE }).toFormat('HH:mm') !== '13:00').map(iso);

describe("a long series carries its zone's changes for every year it reaches", () => {
  it('weekly: every Thursday for 800 weeks, 1995 to 2010', () => {
    const list = occurrences(series('1995-01-05', 'FREQ=WEEKLY;COUNT=800'), 1000);
    expect(list).toHaveLength(800);
    expect(iso(list[799])).toBe('2010-04-29T17:00:00Z');
    expect(misplaced(list)).toEqual([]);
    // Daylight time from 9 March 2008, 2 November 2008 standard again.
    expect(list.map(iso)).toEqual(expect.arrayContaining(['2008-03-06T18:00:00Z', '2008-03-13T17:00:00Z', '2008-10-30T17:00:00Z', '2008-11-06T18:00:00Z']));
  });

  it('monthly: every 13th for 200 months, 1995 to 2011', () => {
    const list = occurrences(series('1995-01-13', 'FREQ=MONTHLY;COUNT=200'), 1000);
    expect(list).toHaveLength(200);
    expect(misplaced(list)).toEqual([]);
    expect(list.map(iso)).toEqual(expect.arrayContaining(['2007-03-13T17:00:00Z', '2010-03-13T18:00:00Z']));
  });

  it('yearly: every 20 March for 20 years, 1995 to 2014', () => {
    const list = occurrences(series('1995-03-20', 'FREQ=YEARLY;COUNT=20'), 1000);
    expect(list).toHaveLength(20);
    expect(misplaced(list)).toEqual([]);
    // Standard time on 20 March until 2006, daylight time from 2007.
    expect(list.map(iso).slice(11, 13)).toEqual(['2006-03-20T18:00:00Z', '2007-03-20T17:00:00Z']);
  });

  it('with BY parts that leave some periods without an occurrence', () => {
    for (const [day, rule, count] of [
      // The fifth Friday: four or five months a year.
      ['1995-03-31', 'FREQ=MONTHLY;BYDAY=5FR;COUNT=80', 80],
      // Monthly, in March only: once a year.
      ['1995-03-14', 'FREQ=MONTHLY;BYMONTH=3;BYDAY=2TU;COUNT=20', 20],
      ['1995-03-13', 'FREQ=MONTHLY;BYMONTH=3;BYMONTHDAY=13;COUNT=20', 20],
      // Weekly, in March only.
      ['1995-03-07', 'FREQ=WEEKLY;BYMONTH=3;BYDAY=TU;COUNT=80', 80],
      // The 31st: seven months a year.
      ['1995-01-31', 'FREQ=MONTHLY;BYMONTHDAY=31;COUNT=100', 100],
    ] as const) {
      const list = occurrences(series(day, rule), 1000);
      expect([rule, list.length, new Date(list[list.length - 1]).getUTCFullYear() >= 2009]).toEqual([rule, count, true]);
      expect([rule, misplaced(list)]).toEqual([rule, []]);
    }
  });

  it('with BY parts every period has', () => {
    for (const [day, rule, count] of [
      ['1995-01-02', 'FREQ=MONTHLY;BYDAY=1MO,5FR;COUNT=200', 200],
      ['1995-01-15', 'FREQ=MONTHLY;BYMONTHDAY=15,31;COUNT=200', 200],
      ['1995-01-03', 'FREQ=WEEKLY;BYDAY=TU,TH;COUNT=1000', 1000],
      ['1995-03-27', 'FREQ=YEARLY;BYMONTH=3;BYDAY=-1MO;COUNT=20', 20],
      ['1995-03-25', 'FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=25;COUNT=20', 20],
    ] as const) {
      const list = occurrences(series(day, rule), 1000);
      expect([rule, list.length]).toEqual([rule, count]);
      expect([rule, misplaced(list)]).toEqual([rule, []]);
    }
  });
});

describe('a short series carries no more years than it needs', () => {
  /** The year of the last change the file's VTIMEZONE describes. */
  const lastChangeYear = (e: IcsEvent) => Math.max(...[...buildIcs([e], { uidHost: 'h' }).matchAll(/\r\nDTSTART:(\d{4})/g)].map((m) => Number(m[1])));
  // Cairo's changes follow no yearly rule for long, so its VTIMEZONE lists each year's.
  const cairo = (rule: string): IcsEvent => ({ ...series('2027-01-04', rule), timezone: 'Africa/Cairo', startMs: at('2027-01-04T11:00:00Z'), endMs: at('2027-01-04T12:00:00Z') });

  it('when every month has one of its days', () => {
    // Twelve occurrences within a year: to 2028, and five years of changes after (2033).
    for (const rule of ['FREQ=MONTHLY;BYDAY=MO,TH;COUNT=12', 'FREQ=MONTHLY;BYDAY=1MO,5FR;COUNT=12', 'FREQ=MONTHLY;BYMONTHDAY=4,31;COUNT=12', 'FREQ=YEARLY;BYMONTH=1;BYDAY=1MO,5MO;COUNT=2', 'FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=4,30;COUNT=2']) {
      expect([rule, lastChangeYear(cairo(rule)) <= 2034]).toEqual([rule, true]);
    }
    // A day some months lack: as far as the horizon.
    expect(lastChangeYear(cairo('FREQ=MONTHLY;BYDAY=5FR;COUNT=12'))).toBeGreaterThan(2050);
  });
});
