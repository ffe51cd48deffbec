import { DateTime } from 'luxon';
import { isoWithOffset, wallClock, zoneOffsetMinutes } from './time-zones';

/**
 * Date inputs the API accepts: ISO 8601 with or without an offset, `YYYY-MM-DD HH:mm[:ss]`,
 * or a bare date. Without an offset the time is wall time in the event's zone.
 */
const INPUT_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/;

type ParsedDate =
  | { kind: 'date'; date: string; year: number; month: number; day: number } // a calendar day
  | {
      kind: 'datetime';
      year: number;
      month: number;
      day: number;
      hour: number;
      minute: number;
      second: number;
      ms: number;
      /** Minutes east of UTC when the input had an offset; null for wall time. */
      offsetMinutes: number | null;
    };

/**
 * The years a date input may name. Earlier ones are mistakes, and years below 100 would be
 * read by Date.UTC as 19xx. Instants are stored and compared in Postgres, whose ISO 8601
 * text has four-digit years: nothing at or after the year 10000 may reach it.
 */
export const FIRST_YEAR = 1000;
export const LAST_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const daysIn = (y: number, m: number) => (m === 2 && isLeap(y) ? 29 : DAYS_IN_MONTH[m - 1]);

/**
 * Checks the shape and that the calendar values exist (no 30 February, no 25:00); does not
 * resolve a zone yet. Plain arithmetic, no date library: this runs on every submission.
 */
export function parseDateInput(input: string): ParsedDate | null {
  const m = INPUT_PATTERN.exec(input.trim());
  if (!m) return null;
  const [, ys, mos, ds, hs, mis, ss, frac, off] = m;
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  if (year < FIRST_YEAR) return null;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (hs === undefined) return { kind: 'date', date: `${ys}-${mos}-${ds}`, year, month, day };
  const hour = Number(hs);
  const minute = Number(mis);
  const second = Number(ss ?? '0');
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes: number | null = null;
  if (off) {
    if (off.toUpperCase() === 'Z') offsetMinutes = 0;
    else {
      const om = /^([+-])(\d{2}):?(\d{2})?$/.exec(off);
      if (!om || Number(om[2]) > 18 || Number(om[3] ?? '0') > 59) return null;
      offsetMinutes = (om[1] === '-' ? -1 : 1) * (Number(om[2]) * 60 + Number(om[3] ?? '0'));
    }
  }
  const ms = frac ? Number(frac.padEnd(3, '0').slice(0, 3)) : 0;
  return { kind: 'datetime', year, month, day, hour, minute, second, ms, offsetMinutes };
}

/**
 * The instant of a wall-clock time in an IANA zone. A time that does not exist (the hour
 * skipped when clocks go forward) moves forward by the gap; a time that exists twice (the
 * hour repeated when clocks go back) is its first occurrence. Same method as luxon's.
 */
export function wallTimeToEpoch(fields: { year: number; month: number; day: number; hour?: number; minute?: number; second?: number; ms?: number }, zone: string): number {
  const local = Date.UTC(fields.year, fields.month - 1, fields.day, fields.hour ?? 0, fields.minute ?? 0, fields.second ?? 0, fields.ms ?? 0);
  const o = zoneOffsetMinutes(zone, local);
  let guess = local - o * 60_000;
  const o2 = zoneOffsetMinutes(zone, guess);
  if (o === o2) return guess;
  guess -= (o2 - o) * 60_000;
  const o3 = zoneOffsetMinutes(zone, guess);
  if (o2 === o3) return guess;
  return local - Math.min(o2, o3) * 60_000;
}

/** The instant (epoch ms) a parsed input names, reading wall time in `zone` when it has no offset. */
export function resolveEpochMs(parsed: ParsedDate, zone: string): number {
  if (parsed.kind === 'datetime' && parsed.offsetMinutes !== null) {
    return Date.UTC(parsed.year, parsed.month - 1, parsed.day, parsed.hour, parsed.minute, parsed.second, parsed.ms) - parsed.offsetMinutes * 60_000;
  }
  return wallTimeToEpoch(parsed, zone);
}

/** resolveEpochMs as a luxon DateTime in `zone`, for callers that do calendar arithmetic. */
export function resolveInstant(parsed: ParsedDate, zone: string): DateTime {
  return DateTime.fromMillis(resolveEpochMs(parsed, zone), { zone });
}

/** The calendar day (YYYY-MM-DD) a parsed input names, seen in `zone` (all-day events). */
export function resolveDay(parsed: ParsedDate, zone: string): string {
  if (parsed.kind === 'date') return parsed.date;
  const w = wallClock(resolveEpochMs(parsed, zone), zone);
  return `${String(w.year).padStart(4, '0')}-${String(w.month).padStart(2, '0')}-${String(w.day).padStart(2, '0')}`;
}

/** `2026-03-10T13:00:00-04:00`: the instant in `zone` with its numeric offset (never `Z`). */
export function formatWithOffset(epochMs: number, zone: string): string {
  return isoWithOffset(wallClock(epochMs, zone));
}

/** Postgres timestamptz text (`2026-03-05 10:00:00.123456+00`) to ISO with microseconds and Z. */
export function pgTimestampToIsoMicros(value: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?/.exec(value);
  if (!m) return new Date(value).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  return `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(6, '0')}Z`;
}

/** The same for a column that may be null. */
export const pgTimestampToIsoMicrosOrNull = (value: string | null): string | null => (value === null ? null : pgTimestampToIsoMicros(value));

/** Postgres timestamptz text (`2026-03-05 10:00:00.123456+00`) to epoch milliseconds. */
export function pgTimestampToMillis(value: string): number {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)([+-]\d{2}(?::?\d{2})?)?$/.exec(value);
  if (!m) return Date.parse(value);
  const offset = m[3] ? (m[3].length === 3 ? `${m[3]}:00` : m[3]) : '+00:00';
  return Date.parse(`${m[1]}T${m[2]}${offset}`);
}
