import { DateTime } from 'luxon';
import { isoWithOffset, wallClock } from './time-zones';

/**
 * Date inputs the API accepts: ISO 8601 with or without an offset, `YYYY-MM-DD HH:mm[:ss]`,
 * or a bare date. Without an offset the time is wall time in the event's zone.
 */
const INPUT_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/;

export type ParsedDate =
  | { kind: 'date'; date: string } // YYYY-MM-DD, a calendar day
  | { kind: 'datetime'; hasOffset: boolean; wall: string; offset: string | null };

/** Checks the shape and that the calendar values exist; does not resolve a zone yet. */
export function parseDateInput(input: string): ParsedDate | null {
  const m = INPUT_PATTERN.exec(input.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, off] = m;
  const date = `${y}-${mo}-${d}`;
  if (!DateTime.fromISO(date, { zone: 'UTC' }).isValid) return null;
  if (h === undefined) return { kind: 'date', date };
  const ms = frac ? `.${frac.padEnd(3, '0').slice(0, 3)}` : '';
  const wall = `${date}T${h}:${mi}:${s ?? '00'}${ms}`;
  if (!DateTime.fromISO(wall, { zone: 'UTC' }).isValid) return null;
  let offset: string | null = null;
  if (off) {
    offset = off.toUpperCase() === 'Z' ? '+00:00' : normalizeOffset(off);
    if (!offset) return null;
  }
  return { kind: 'datetime', hasOffset: offset !== null, wall, offset };
}

function normalizeOffset(raw: string): string | null {
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(raw);
  if (!m) return null;
  const hours = Number(m[2]);
  const minutes = Number(m[3] ?? '0');
  if (hours > 18 || minutes > 59) return null;
  return `${m[1]}${m[2]}:${m[3] ?? '00'}`;
}

/** The instant a parsed date-time names, reading wall time in `zone` when it has no offset. */
export function resolveInstant(parsed: ParsedDate, zone: string): DateTime {
  if (parsed.kind === 'date') return DateTime.fromISO(parsed.date, { zone });
  if (parsed.offset) return DateTime.fromISO(parsed.wall + parsed.offset, { setZone: true }).setZone(zone);
  return DateTime.fromISO(parsed.wall, { zone });
}

/** The calendar day a parsed input names, seen in `zone` (all-day events). */
export function resolveDay(parsed: ParsedDate, zone: string): string {
  if (parsed.kind === 'date') return parsed.date;
  return resolveInstant(parsed, zone).toISODate() as string;
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

/** Postgres timestamptz text (`2026-03-05 10:00:00.123456+00`) to epoch milliseconds. */
export function pgTimestampToMillis(value: string): number {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)([+-]\d{2}(?::?\d{2})?)?$/.exec(value);
  if (!m) return Date.parse(value);
  const offset = m[3] ? (m[3].length === 3 ? `${m[3]}:00` : m[3]) : '+00:00';
  return Date.parse(`${m[1]}T${m[2]}${offset}`);
}
