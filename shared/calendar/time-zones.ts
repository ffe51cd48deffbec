import { DateTime, IANAZone } from 'luxon';

/** True for a zone name the IANA database knows (`America/New_York`, `UTC`). */
export function isValidTimeZone(name: unknown): name is string {
  return typeof name === 'string' && name.length <= 64 && /^[A-Za-z0-9_+\-/]+$/.test(name) && IANAZone.isValidZone(name);
}

// Intl gives real abbreviations only for the locale that uses them (EDT in en-US, CEST in
// en-GB, AEST in en-AU, IST in en-IN); other locales answer "GMT+2". Try each in turn.
const ABBREVIATION_LOCALES = ['en-US', 'en-GB', 'en-AU', 'en-NZ', 'en-IN'];
const abbreviationCache = new Map<string, string>();

/** The zone's abbreviation at that instant (EDT, CET, IST), or GMT±h when it has none. */
export function zoneAbbreviation(zone: string, at: DateTime): string {
  const local = at.setZone(zone);
  const key = `${zone}|${local.offset}|${local.isInDST ? 1 : 0}`;
  const cached = abbreviationCache.get(key);
  if (cached) return cached;
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
  const result = found || fallback || `GMT${local.toFormat('ZZ')}`;
  if (abbreviationCache.size < 5000) abbreviationCache.set(key, result);
  return result;
}

/** `EDT / GMT-04:00`: the abbreviation and numeric offset in force at that instant. */
export function timezoneReadable(zone: string, at: DateTime): string {
  return `${zoneAbbreviation(zone, at)} / GMT${at.setZone(zone).toFormat('ZZ')}`;
}
