import { DateTime, IANAZone } from 'luxon';

// luxon checks a zone by building an Intl formatter each time; remember the answers.
const zoneValidity = new Map<string, boolean>();

/** True for a zone name the IANA database knows (`America/New_York`, `UTC`). */
export function isValidTimeZone(name: unknown): name is string {
  if (typeof name !== 'string' || name.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(name)) return false;
  let valid = zoneValidity.get(name);
  if (valid === undefined) {
    valid = IANAZone.isValidZone(name);
    if (zoneValidity.size < 10_000) zoneValidity.set(name, valid);
  }
  return valid;
}

/*
 * Offsets of IANA zones come from Intl and cost tens of microseconds each; a listing page
 * needs hundreds. Every real transition falls on a quarter hour (UTC), so the offset is
 * constant within a 15-minute bucket and can be cached by (zone, bucket).
 */
const QUARTER_HOUR_MS = 15 * 60 * 1000;
const offsetCache = new Map<string, number>();
const OFFSET_CACHE_MAX = 100_000;

/** The zone's UTC offset in minutes at that instant. */
export function zoneOffsetMinutes(zone: string, epochMs: number): number {
  const key = `${zone}|${Math.floor(epochMs / QUARTER_HOUR_MS)}`;
  let offset = offsetCache.get(key);
  if (offset === undefined) {
    offset = IANAZone.create(zone).offset(epochMs);
    if (offsetCache.size >= OFFSET_CACHE_MAX) offsetCache.clear();
    offsetCache.set(key, offset);
  }
  return offset;
}

/** Wall-clock fields of an instant in a zone, computed without Intl on the hot path. */
export interface WallClock {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number; // 0 = Sunday
  offsetMinutes: number;
}

export function wallClock(epochMs: number, zone: string): WallClock {
  const offsetMinutes = zoneOffsetMinutes(zone, epochMs);
  const d = new Date(epochMs + offsetMinutes * 60_000);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    weekday: d.getUTCDay(),
    offsetMinutes,
  };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `+05:30`, `-04:00`, `+00:00` */
export function offsetString(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** `2026-03-10T13:00:00-04:00` */
export function isoWithOffset(w: WallClock): string {
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${offsetString(w.offsetMinutes)}`;
}

// Intl gives real abbreviations only for the locale that uses them (EDT in en-US, CEST in
// en-GB, AEST in en-AU, IST in en-IN); other locales answer "GMT+2". Try each in turn.
const ABBREVIATION_LOCALES = ['en-US', 'en-GB', 'en-AU', 'en-NZ', 'en-IN'];
const abbreviationCache = new Map<string, string>();

/** The zone's abbreviation at that instant (EDT, CET, IST), or GMT±h when it has none. */
export function zoneAbbreviation(zone: string, epochMs: number, offset = zoneOffsetMinutes(zone, epochMs)): string {
  const key = `${zone}|${offset}`;
  const cached = abbreviationCache.get(key);
  if (cached) return cached;
  const local = DateTime.fromMillis(epochMs, { zone });
  let fallback = '';
  let found = '';
  for (const locale of ABBREVIATION_LOCALES) {
    const name = local.setLocale(locale).offsetNameShort ?? '';
    if (!fallback) fallback = name;
    if (name && !/^(GMT|UTC)[+-]/.test(name)) {
      found = name;
      break;
    }
  }
  const result = found || fallback || `GMT${offsetString(offset)}`;
  if (abbreviationCache.size < 5000) abbreviationCache.set(key, result);
  return result;
}

/** `EDT / GMT-04:00`: the abbreviation and numeric offset in force at that instant. */
export function timezoneReadable(zone: string, epochMs: number, offset = zoneOffsetMinutes(zone, epochMs)): string {
  return `${zoneAbbreviation(zone, epochMs, offset)} / GMT${offsetString(offset)}`;
}
