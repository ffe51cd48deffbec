import { DateTime } from 'luxon';

// Runtimes take zone names in any case ('utc', 'europe/berlin'); what the API stores and
// answers is the IANA spelling. The zones Intl lists give it, looked up case-insensitively,
// and so do their parts (America, Argentina, Buenos_Aires) for names it does not list.
let listedZones: Map<string, string> | undefined;
let listedParts: Map<string, string> | undefined;

function listed(): { zones: Map<string, string>; parts: Map<string, string> } {
  if (!listedZones || !listedParts) {
    listedZones = new Map();
    listedParts = new Map();
    for (const zone of [...Intl.supportedValuesOf('timeZone'), 'UTC']) {
      listedZones.set(zone.toLowerCase(), zone);
      for (const part of zone.split('/')) listedParts.set(part.toLowerCase(), part);
    }
  }
  return { zones: listedZones, parts: listedParts };
}

/**
 * A name the runtime accepts without listing it: a link (America/Argentina/Buenos_Aires,
 * Asia/Kolkata, US/Eastern) or an Etc/ zone. The runtime's own name for it is the spelling
 * when it is the same name in another case. Otherwise that is another zone's name (this
 * runtime's ICU calls Asia/Kolkata Asia/Calcutta), so the name is kept, spelled part by
 * part as the listed zones spell those parts, or as sent when a part appears in none.
 */
function unlistedZone(name: string): string | null {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  if (resolved.toLowerCase() === name.toLowerCase()) return resolved;
  const { parts } = listed();
  const spelled = name.split('/').map((part) => parts.get(part.toLowerCase()));
  return spelled.every((part) => part !== undefined) ? spelled.join('/') : name;
}

// Building an Intl formatter for a name costs tens of microseconds; remember the answers.
const canonicalNames = new Map<string, string | null>();

/** The IANA spelling of a zone name the runtime knows (`utc` → `UTC`), or null for any other value. */
export function canonicalTimeZone(name: unknown): string | null {
  if (typeof name !== 'string' || name.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(name)) return null;
  let canonical = canonicalNames.get(name);
  if (canonical === undefined) {
    canonical = listed().zones.get(name.toLowerCase()) ?? unlistedZone(name);
    if (canonicalNames.size < 10_000) canonicalNames.set(name, canonical);
  }
  return canonical;
}

/** True for a zone name the IANA database knows (`America/New_York`, `UTC`), in any case. */
export function isValidTimeZone(name: unknown): name is string {
  return canonicalTimeZone(name) !== null;
}

// An Intl formatter that prints a weekday's initial and the offset ("T, GMT+05:30",
// "W, GMT-00:44:30") costs under a microsecond a call, several times less than luxon's
// reading of the date fields; same data, same answer.
const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * The zone's UTC offset at that instant straight from Intl, rounded to the minute (see
 * zoneOffsetMinutes); NaN for a zone the runtime does not know.
 */
export function intlOffsetMinutes(zone: string, epochMs: number): number {
  let format = offsetFormats.get(zone);
  if (!format) {
    try {
      format = new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'narrow', timeZoneName: 'longOffset' });
    } catch {
      return Number.NaN;
    }
    if (offsetFormats.size < 10_000) offsetFormats.set(zone, format);
  }
  const text = format.format(epochMs);
  const at = text.lastIndexOf('GMT') + 3;
  if (at === 2 || at >= text.length) return 0;
  const sign = text[at] === '-' ? -1 : 1;
  const [h = '0', m = '0', s = '0'] = text.slice(at + 1).split(':');
  return Math.round((sign * (Number(h) * 3600 + Number(m) * 60 + Number(s))) / 60);
}

/*
 * A listing page needs hundreds of offsets. Nearly every transition falls on a quarter hour
 * (UTC), so the offset of a 15-minute bucket is cached by (zone, bucket) once it is the
 * same at both ends of the bucket. Some are not (Moncton, Goose Bay and St. John's changed
 * at 00:01 local until 2011; local mean time ended at odd seconds): a bucket with a change
 * inside is never cached, and its instants are each read from Intl.
 */
const QUARTER_HOUR_MS = 15 * 60 * 1000;
const offsetCache = new Map<string, number>();
const OFFSET_CACHE_MAX = 100_000;
/** A bucket whose offset changes inside it. */
const CHANGING = Number.NaN;

/**
 * The zone's UTC offset in whole minutes at that instant. Local mean time, which many zones
 * kept before standard time (Monrovia until 1972: -00:44:30), is not a whole number of
 * minutes, and ISO 8601 offsets cannot show seconds: it is rounded to the minute, and wall
 * times are printed and read with that same offset, so every printed date-time still names
 * its exact instant.
 */
export function zoneOffsetMinutes(zone: string, epochMs: number): number {
  const bucket = Math.floor(epochMs / QUARTER_HOUR_MS);
  const key = `${zone}|${bucket}`;
  let offset = offsetCache.get(key);
  if (offset === undefined) {
    const first = intlOffsetMinutes(zone, bucket * QUARTER_HOUR_MS);
    const last = intlOffsetMinutes(zone, (bucket + 1) * QUARTER_HOUR_MS - 1);
    offset = first === last ? first : CHANGING;
    if (offsetCache.size >= OFFSET_CACHE_MAX) offsetCache.clear();
    offsetCache.set(key, offset);
  }
  return Number.isNaN(offset) ? intlOffsetMinutes(zone, epochMs) : offset;
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

/** `+05:30`, `-04:00`, `+00:00` (to the minute: ISO 8601 offsets have no seconds) */
export function offsetString(minutes: number): string {
  const rounded = Math.round(minutes);
  const sign = rounded < 0 ? '-' : '+';
  const abs = Math.abs(rounded);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** `2026-03-10T13:00:00-04:00` */
export function isoWithOffset(w: WallClock): string {
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${offsetString(w.offsetMinutes)}`;
}

// Intl gives real abbreviations only for the locale that uses them (EDT in en-US, CEST in
// en-GB, AEST in en-AU, IST in en-IN, JST in ja-JP, SGT in en-SG, WAT and SAST in en-ZA,
// BRT in pt-BR, WIB in id-ID); other locales answer "GMT+2". Try each in turn, taking only
// a plain abbreviation (not "CST (Kuba)").
const ABBREVIATION_LOCALES = ['en-US', 'en-GB', 'en-AU', 'en-NZ', 'en-IN', 'en-SG', 'en-HK', 'en-ZA', 'ja-JP', 'pt-BR', 'id-ID', 'en-PH'];
const ABBREVIATION = /^[A-Z]{2,5}$/;
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
    // Local mean time comes as `GMT-0:44:30` (or `GMT-0.44.30`): seconds the printed
    // offset does not carry. Only hours and minutes stand in for a name.
    if (!fallback && /^(GMT|UTC)([+-]\d{1,2}(:\d{2})?)?$/.test(name)) fallback = name;
    if (ABBREVIATION.test(name)) {
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
