import { rrulestr } from 'rrule';
import { wallTimeToEpoch } from '../../shared/calendar/dates';
import { buildIcs, type IcsEvent } from '../../shared/calendar/ics';
import { wallClock } from '../../shared/calendar/time-zones';
import { pythonIcalendarMissing, readWithIcalJs, readWithPythonIcalendar, type ReadEvent } from '../helpers/ics-readers';

/*
 * The instant a client computes from our .ics must be the API's date_start, in every zone
 * and under the rules of the event's own years, whichever parser the client uses. ical.js
 * (Thunderbird) reads every zone here; python-icalendar, which builds its zones from the
 * file's VTIMEZONE as libical does, reads a few.
 */

const ZONES = Intl.supportedValuesOf('timeZone');
const FIRST_YEAR = 1990;
const LAST_YEAR = 2037;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

const event = (zone: string, uid: string, startMs: number, recurrenceRule: string | null = null): IcsEvent => ({
  uid,
  sequence: 0,
  title: 'Meeting',
  descriptionHtml: null,
  location: null,
  url: null,
  startMs,
  endMs: startMs + HOUR_MS,
  isAllDay: false,
  timezone: zone,
  recurrenceRule,
  reminderBefore: null,
  busyType: null,
  updatedMs: Date.UTC(2026, 0, 1),
});

const iso = (ms: number) => new Date(ms).toISOString();
const uidOf = (read: ReadEvent) => read.uid.slice('evt_'.length, read.uid.indexOf('@'));

// The offset straight from Intl, independent of the code under test, to find where to look.
const offsetFormats = new Map<string, Intl.DateTimeFormat>();
function intlOffset(zone: string, ms: number): string {
  let format = offsetFormats.get(zone);
  if (!format) offsetFormats.set(zone, (format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })));
  const text = format.format(ms);
  return text.slice(text.lastIndexOf('GMT'));
}
const minutesOf = (offset: string) =>
  offset === 'GMT' ? 0 : (offset[3] === '-' ? -1 : 1) * (Number(offset.slice(4, 6)) * 60 + Number(offset.slice(7, 9)));

/** The zone's changes in those years (read every ten days, then to the minute) and how many minutes each moves the clock. */
function changesOf(zone: string, fromYear: number, toYear: number): { atMs: number; minutes: number }[] {
  const found: { atMs: number; minutes: number }[] = [];
  const end = Date.UTC(toYear + 1, 0, 1);
  const step = 10 * DAY_MS;
  for (let t = Date.UTC(fromYear, 0, 1); t < end; t += step) {
    const before = intlOffset(zone, t);
    if (before === intlOffset(zone, t + step)) continue;
    let [lo, hi] = [t, t + step];
    while (hi - lo > 60_000) {
      const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
      if (intlOffset(zone, mid) === before) lo = mid;
      else hi = mid;
    }
    found.push({ atMs: hi, minutes: minutesOf(intlOffset(zone, hi)) - minutesOf(before) });
  }
  return found;
}

/**
 * A year's changes in short: which offsets, which month, weekday and wall time. A year that
 * reads like the one before changed under the same rule.
 */
function yearPattern(zone: string, changes: { atMs: number; minutes: number }[]): string {
  return changes
    .map((c) => {
      const w = wallClock(c.atMs - 60_000, zone);
      return `${w.offsetMinutes}${c.minutes > 0 ? '+' : ''}${c.minutes}@${w.month}/${w.weekday}/${w.hour}:${w.minute}`;
    })
    .join(' ');
}

const instantsByZone = new Map<string, number[]>();

/**
 * One instant every third year, and instants on both sides of the changes (clear of the wall times a
 * change repeats: those are written in UTC, as no wall time names them for every reader) of
 * every year whose changes differ from the year before's (a new rule, or none) and of every
 * fourth year.
 */
function instantsOf(zone: string, zoneIndex: number): number[] {
  const known = instantsByZone.get(zone);
  if (known) return known;
  const instants: number[] = [];
  for (let year = FIRST_YEAR + (zoneIndex % 3); year <= LAST_YEAR; year += 3) {
    instants.push(Date.UTC(year, (year * 5 + zoneIndex) % 12, 1 + ((year * 7) % 28), (year * 3 + zoneIndex) % 24, 17));
  }
  const byYear = new Map<number, { atMs: number; minutes: number }[]>();
  for (const change of changesOf(zone, FIRST_YEAR - 1, LAST_YEAR)) {
    const year = new Date(change.atMs).getUTCFullYear();
    byYear.set(year, [...(byYear.get(year) ?? []), change]);
  }
  for (let year = FIRST_YEAR; year <= LAST_YEAR; year++) {
    const changes = byYear.get(year) ?? [];
    if ((year + zoneIndex) % 4 !== 0 && yearPattern(zone, changes) === yearPattern(zone, byYear.get(year - 1) ?? [])) continue;
    for (const change of changes) {
      const moved = Math.abs(change.minutes) * 60_000;
      instants.push(change.atMs - moved - 60_000, change.atMs + moved);
    }
  }
  instantsByZone.set(zone, instants);
  return instants;
}

/** Occurrences of a rule on the event's wall clock, each placed as the API places a wall time. */
function expectedOccurrences(e: IcsEvent, limit: number): number[] {
  const w = wallClock(e.startMs, e.timezone);
  const rule = rrulestr(`RRULE:${e.recurrenceRule}`, { dtstart: new Date(Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second)) });
  return rule
    .all((_d, i) => i < limit)
    .map((d) =>
      wallTimeToEpoch(
        { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() },
        e.timezone,
      ),
    );
}

/** What a reader got wrong, at most one line per event. */
function mismatches(events: IcsEvent[], read: ReadEvent[], limit: number): string[] {
  const byUid = new Map(read.map((r) => [uidOf(r), r]));
  const wrong: string[] = [];
  for (const e of events) {
    const got = byUid.get(e.uid);
    if (!got) {
      wrong.push(`${e.timezone} ${e.uid}: not read`);
      continue;
    }
    if (got.startMs !== e.startMs) wrong.push(`${e.timezone} ${iso(e.startMs)}: read as ${iso(got.startMs)}`);
    else if (e.recurrenceRule) {
      const want = expectedOccurrences(e, limit);
      const at = want.findIndex((ms, i) => got.occurrencesMs?.[i] !== ms);
      if (at >= 0 || got.occurrencesMs?.length !== want.length) {
        const seen = got.occurrencesMs?.[at];
        wrong.push(`${e.timezone} ${e.recurrenceRule} from ${iso(e.startMs)}: occurrence ${at} ${seen === undefined ? 'missing' : `at ${iso(seen)}`}, not ${iso(want[at])}`);
      }
    }
  }
  return wrong;
}

describe('ICS read by ical.js (Thunderbird) in every zone', () => {
  it('places every event of a feed at its API instant, 1990 to 2037, on both sides of each change', () => {
    const wrong: string[] = [];
    ZONES.forEach((zone, zoneIndex) => {
      const events = instantsOf(zone, zoneIndex).map((ms, i) => event(zone, `e${i}`, ms));
      wrong.push(...mismatches(events, readWithIcalJs(buildIcs(events, { uidHost: 'h' })), 0));
    });
    expect(wrong.slice(0, 20)).toEqual([]);
  }, 120_000);

  it('places a single event at its API instant in a file of its own (that year\'s rules only)', () => {
    const wrong: string[] = [];
    ZONES.forEach((zone, zoneIndex) => {
      // Next to a change where there are some: a few spread over the years.
      const instants = instantsOf(zone, zoneIndex);
      const yearly = Math.ceil((LAST_YEAR - FIRST_YEAR + 1 - (zoneIndex % 3)) / 3);
      const pool = instants.length > yearly ? instants.slice(yearly) : instants;
      const picks = [0.1, 0.45, 0.8, 0.97].map((f) => pool[Math.floor(f * pool.length)]);
      picks.forEach((ms, i) => {
        const single = [event(zone, `s${i}`, ms)];
        wrong.push(...mismatches(single, readWithIcalJs(buildIcs(single, { uidHost: 'h' })), 0));
      });
    });
    expect(wrong.slice(0, 20)).toEqual([]);
  }, 120_000);

  it('expands recurring events across changes to the occurrences of their RRULE', () => {
    const wrong: string[] = [];
    ZONES.forEach((zone, zoneIndex) => {
      const year = FIRST_YEAR + ((zoneIndex * 7) % (LAST_YEAR - FIRST_YEAR - 6));
      const changes = changesOf(zone, year, year + 1);
      // Weekly from three weeks before a change, every other month over six years (rules
      // change in some), every 11 days over one: at noon, which no change repeats or skips.
      const near = changes.length ? wallClock(changes[0].atMs - 21 * DAY_MS, zone) : { year, month: 3, day: 1 };
      const at = (f: { year: number; month: number; day: number }) => wallTimeToEpoch({ year: f.year, month: f.month, day: f.day, hour: 12 }, zone);
      const events = [
        event(zone, 'weekly', at(near), 'FREQ=WEEKLY;COUNT=12'),
        event(zone, 'monthly', at({ year, month: 1 + (zoneIndex % 12), day: 10 }), `FREQ=MONTHLY;INTERVAL=2;UNTIL=${year + 6}0101T000000Z`),
        event(zone, 'daily', at({ year: year + 1, month: 1, day: 5 }), 'FREQ=DAILY;INTERVAL=11;COUNT=34'),
      ];
      wrong.push(...mismatches(events, readWithIcalJs(buildIcs(events, { uidHost: 'h' }), 100), 100));
    });
    expect(wrong.slice(0, 20)).toEqual([]);
  }, 120_000);
});

describe('ICS read by ical.js: the cases of the issue', () => {
  const readStart = (e: IcsEvent) => iso(readWithIcalJs(buildIcs([e], { uidHost: 'h' }))[0].startMs);

  it('Cairo in July 2027 and Casablanca in February 2027 (changes without a yearly rule)', () => {
    expect(readStart(event('Africa/Cairo', 'c', Date.parse('2027-07-15T12:00:00Z')))).toBe('2027-07-15T12:00:00.000Z');
    expect(readStart(event('Africa/Casablanca', 'm', Date.parse('2027-02-15T12:00:00Z')))).toBe('2027-02-15T12:00:00.000Z');
  });

  it('New York in March 2006, under the rules before 2007', () => {
    expect(readStart(event('America/New_York', 'n', Date.parse('2006-03-20T15:00:00Z')))).toBe('2006-03-20T15:00:00.000Z');
  });

  it('a single event in the hour repeated when clocks go back (ical.js takes the second)', () => {
    for (const ms of [Date.parse('2026-11-01T05:30:00Z'), Date.parse('2026-11-01T06:30:00Z')]) {
      expect(readStart(event('America/New_York', 'r', ms))).toBe(iso(ms));
    }
  });
});

describe('ICS read by python-icalendar through its own VTIMEZONE', () => {
  const missing = pythonIcalendarMissing();
  const cases: [string, string, string | null][] = [
    ['Africa/Cairo', '2027-07-15T12:00:00Z', null],
    ['Africa/Casablanca', '2027-02-15T12:00:00Z', null],
    ['America/New_York', '2006-03-20T15:00:00Z', null],
    ['America/New_York', '2006-02-15T17:00:00Z', 'FREQ=WEEKLY;COUNT=40'],
    ['Australia/Lord_Howe', '2026-03-20T01:00:00Z', 'FREQ=WEEKLY;COUNT=12'],
    ['America/Sao_Paulo', '2018-01-10T14:00:00Z', 'FREQ=MONTHLY;COUNT=30'],
    ['Europe/Moscow', '2010-06-01T09:00:00Z', 'FREQ=MONTHLY;COUNT=60'],
    ['Asia/Tehran', '2021-03-01T08:30:00Z', 'FREQ=WEEKLY;INTERVAL=4;COUNT=20'],
  ];
  (missing ? it.skip : it)(missing ? `agrees with ical.js and the API (skipped: ${missing})` : 'agrees with ical.js and the API', () => {
    const events = cases.map(([zone, start, rule], i) => event(zone, `p${i}`, Date.parse(start), rule));
    const text = buildIcs(events, { uidHost: 'h' });
    expect(mismatches(events, readWithPythonIcalendar(text, 100), 100)).toEqual([]);
    expect(mismatches(events, readWithIcalJs(text, 100), 100)).toEqual([]);
  });
});
