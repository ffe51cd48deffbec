import { isValidTimeZone } from '../../../shared/calendar/time-zones';
import type { TextScan } from './text-scan';

/**
 * A zone written in the text ("11:00 AM PT", "14:00 CET", "(UTC-05:00) Eastern Time (US &
 * Canada)", "5pm London time", "noon Central", "9:00 GMT+2"). People write abbreviations loosely ("EST" in
 * July, "CET" in summer) and mean the clock of the place, so an abbreviation names an IANA
 * zone whose offset is taken for the actual date; only a written number ("GMT+2") is fixed.
 */
export interface ZoneMention {
  start: number;
  end: number;
  zone: string | null;
  fixedOffsetMinutes: number | null;
}

const ABBREVIATIONS: Record<string, string> = {
  PT: 'America/Los_Angeles', PST: 'America/Los_Angeles', PDT: 'America/Los_Angeles',
  MT: 'America/Denver', MST: 'America/Denver', MDT: 'America/Denver',
  CT: 'America/Chicago', CST: 'America/Chicago', CDT: 'America/Chicago',
  ET: 'America/New_York', EST: 'America/New_York', EDT: 'America/New_York',
  AKST: 'America/Anchorage', AKDT: 'America/Anchorage', HST: 'Pacific/Honolulu',
  AST: 'America/Halifax', ADT: 'America/Halifax', NST: 'America/St_Johns', NDT: 'America/St_Johns',
  UTC: 'UTC', GMT: 'UTC', UT: 'UTC', Z: 'UTC',
  BST: 'Europe/London', WET: 'Europe/Lisbon', WEST: 'Europe/Lisbon',
  CET: 'Europe/Berlin', CEST: 'Europe/Berlin', MEZ: 'Europe/Berlin', MESZ: 'Europe/Berlin',
  EET: 'Europe/Athens', EEST: 'Europe/Athens', MSK: 'Europe/Moscow',
  IST: 'Asia/Kolkata', PKT: 'Asia/Karachi', SGT: 'Asia/Singapore', HKT: 'Asia/Hong_Kong',
  JST: 'Asia/Tokyo', KST: 'Asia/Seoul', AEST: 'Australia/Sydney', AEDT: 'Australia/Sydney',
  AET: 'Australia/Sydney', ACST: 'Australia/Adelaide', ACDT: 'Australia/Adelaide', AWST: 'Australia/Perth',
  NZST: 'Pacific/Auckland', NZDT: 'Pacific/Auckland', NZT: 'Pacific/Auckland',
  SAST: 'Africa/Johannesburg', WAT: 'Africa/Lagos', EAT: 'Africa/Nairobi', BRT: 'America/Sao_Paulo',
  ART: 'America/Argentina/Buenos_Aires',
};

/** "Eastern Time", "Pacific Standard Time", Outlook's "Arizona" and friends. */
const REGION_NAMES: Array<[RegExp, string]> = [
  [/^eastern\b/i, 'America/New_York'],
  [/^central\s+european\b/i, 'Europe/Berlin'],
  [/^central\b/i, 'America/Chicago'],
  [/^mountain\b/i, 'America/Denver'],
  [/^pacific\b/i, 'America/Los_Angeles'],
  [/^atlantic\b/i, 'America/Halifax'],
  [/^alaska/i, 'America/Anchorage'],
  [/^hawaii/i, 'Pacific/Honolulu'],
  [/^arizona\b/i, 'America/Phoenix'],
  [/^coordinated universal time\b/i, 'UTC'],
  [/^greenwich\b/i, 'UTC'],
  [/^(?:british|uk)\b/i, 'Europe/London'],
  [/^india\b/i, 'Asia/Kolkata'],
  [/^(?:japan|tokyo)\b/i, 'Asia/Tokyo'],
];

let cities: Map<string, string> | undefined;

/** City names of the IANA database ("new york" → America/New_York), built once. */
function cityZones(): Map<string, string> {
  if (!cities) {
    cities = new Map();
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      const city = zone.split('/').pop()?.replace(/_/g, ' ').toLowerCase();
      if (city && city.length >= 4 && !cities.has(city)) cities.set(city, zone);
    }
    // Common names that differ from the database's spelling.
    for (const [name, zone] of [['kiev', 'Europe/Kyiv'], ['calcutta', 'Asia/Kolkata'], ['bombay', 'Asia/Kolkata'], ['mumbai', 'Asia/Kolkata'], ['new delhi', 'Asia/Kolkata'], ['delhi', 'Asia/Kolkata'], ['beijing', 'Asia/Shanghai'], ['washington', 'America/New_York'], ['san francisco', 'America/Los_Angeles'], ['seattle', 'America/Los_Angeles'], ['boston', 'America/New_York'], ['munich', 'Europe/Berlin'], ['frankfurt', 'Europe/Berlin'], ['milan', 'Europe/Rome']] as const) {
      cities.set(name, zone);
    }
  }
  return cities;
}

/** The zone of an Outlook label's places ("Amsterdam, Berlin, Bern, Rome…"). */
function zoneOfLabel(label: string): string | null {
  for (const [pattern, zone] of REGION_NAMES) if (pattern.test(label)) return zone;
  for (const part of label.split(/[,;/]| - /)) {
    const zone = cityZones().get(part.trim().replace(/\.$/, '').toLowerCase());
    if (zone) return zone;
  }
  return null;
}

const offsetMinutes = (sign: string, hours: string, minutes: string | undefined) =>
  (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes ?? 0));

/** A time just before `index` ("11:00 AM ", "3pm (", "16:00 "), so "CT" after a city is not a zone. */
function followsTime(text: string, index: number): boolean {
  const before = text.slice(Math.max(0, index - 14), index);
  return /(?:\d[ ]?[ap]m|\d|\b[ap]m|\bnoon|\bmidnight)[\s(]*$/i.test(before);
}

// Outlook: "(UTC-05:00) Eastern Time (US & Canada)", "(UTC) Dublin, Edinburgh, Lisbon, London".
const OUTLOOK = /\(\s*(?:UTC|GMT)\s*(?:([+-])(\d{1,2})(?::?(\d{2}))?\s*)?\)[ ]*([A-Za-z][^\n().;]{0,80}(?:\([^\n()]{0,20}\))?)?/g;
// "GMT+2", "UTC-05:00", "UTC +5:30" after a time.
const NUMERIC = /\b(?:UTC|GMT)[ ]?([+-])[ ]?(\d{1,2})(?::?(\d{2}))?\b/g;
// "Eastern Time", "Pacific Standard Time", "London time", "Central European Summer Time".
const NAMED = /\b((?:[A-Z][a-z]+[ ]){0,2}[A-Z][a-z]+)(?:[ ](?:Standard|Daylight|Summer))?[ ][Tt]ime\b/g;
const ABBREVIATION = /\(?\b([A-Z]{1,5})\b\)?/g;
// "noon Central", "8:30 a.m. Eastern", "(Pacific)": a US region word alone after a time, not
// the start of a name ("5 Central Park West", "Eastern Market"); a day or month may follow
// ("8:30 a.m. Central Friday").
const REGION_WORD = /\b(Pacific|Mountain|Central|Eastern)\b/g;
const NAME_GOES_ON = /^[ ]+([A-Z][a-z]*)/;
const DAY_OR_MONTH = new Set(
  'mon monday tue tues tuesday wed weds wednesday thu thur thurs thursday fri friday sat saturday sun sunday jan january feb february mar march apr april may jun june jul july aug august sep sept september oct october nov november dec december'.split(' '),
);
const startsName = (text: string, end: number) => {
  const next = NAME_GOES_ON.exec(text.slice(end, end + 16));
  return !!next && !DAY_OR_MONTH.has(next[1].toLowerCase());
};
// "Time zone: America/New_York" (Google Calendar writes the IANA name itself).
const IANA_NAME = /\b(?:[A-Z][A-Za-z]+\/)(?:[A-Z][A-Za-z_-]+\/)?[A-Z][A-Za-z_-]+\b/g;

const MAX_MENTIONS = 20;

/** Finds zone mentions, marks them, and returns them in text order. */
export function findZoneMentions(scan: TextScan): ZoneMention[] {
  const text = scan.text;
  const found: ZoneMention[] = [];
  const add = (m: ZoneMention) => {
    if (found.length >= MAX_MENTIONS || found.some((f) => m.start < f.end && f.start < m.end)) return;
    found.push(m);
    scan.mark('zone', m.start, m.end);
  };
  for (const m of text.matchAll(OUTLOOK)) {
    const [all, sign, hours, minutes, label] = m;
    const labelZone = label ? zoneOfLabel(label) : null;
    const fixed = sign ? offsetMinutes(sign, hours, minutes) : 0;
    add({ start: m.index, end: m.index + all.trimEnd().length, zone: labelZone ?? (sign ? null : 'UTC'), fixedOffsetMinutes: labelZone ? null : fixed });
  }
  for (const m of text.matchAll(IANA_NAME)) {
    if (isValidTimeZone(m[0])) add({ start: m.index, end: m.index + m[0].length, zone: m[0], fixedOffsetMinutes: null });
  }
  for (const m of text.matchAll(NUMERIC)) {
    if (!followsTime(text, m.index)) continue;
    add({ start: m.index, end: m.index + m[0].length, zone: null, fixedOffsetMinutes: offsetMinutes(m[1], m[2], m[3]) });
  }
  for (const m of text.matchAll(NAMED)) {
    if (!followsTime(text, m.index)) continue;
    const zone = zoneOfLabel(m[1]);
    if (zone) add({ start: m.index, end: m.index + m[0].length, zone, fixedOffsetMinutes: null });
  }
  for (const m of text.matchAll(REGION_WORD)) {
    if (!followsTime(text, m.index) || startsName(text, m.index + m[0].length)) continue;
    const zone = zoneOfLabel(m[1]);
    if (zone) add({ start: m.index, end: m.index + m[0].length, zone, fixedOffsetMinutes: null });
  }
  for (const m of text.matchAll(ABBREVIATION)) {
    const zone = ABBREVIATIONS[m[1]];
    if (!zone || m[1] === 'Z' || !followsTime(text, m.index)) continue;
    add({ start: m.index, end: m.index + m[0].length, zone, fixedOffsetMinutes: null });
  }
  return found.sort((a, b) => a.start - b.start);
}
