import { RRule } from 'rrule';
import { FIRST_YEAR, LAST_INSTANT_MS, wallTimeToEpoch } from './dates';
import { wallClock } from './time-zones';

/**
 * RFC 5545 RRULE checking. rrule's own parser accepts nonsense (`FREQ=FOO` parses to an
 * empty rule), so each part is checked here against the grammar before rrule reads it.
 */
const FREQS = ['SECONDLY', 'MINUTELY', 'HOURLY', 'DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'];
const WEEKDAY = '(?:MO|TU|WE|TH|FR|SA|SU)';

const intList = (min: number, max: number, signed: boolean) => (v: string) =>
  v.split(',').every((p) => {
    if (!/^[+-]?\d{1,3}$/.test(p)) return false;
    if (!signed && /^[+-]/.test(p)) return false;
    const n = Math.abs(Number(p));
    return n >= min && n <= max && (signed ? Number(p) !== 0 : true);
  });

const PARTS: Record<string, (v: string) => boolean> = {
  FREQ: (v) => FREQS.includes(v),
  UNTIL: (v) => /^\d{8}(T\d{6}Z?)?$/.test(v) && isRealDate(v),
  COUNT: (v) => /^\d{1,5}$/.test(v) && Number(v) >= 1,
  INTERVAL: (v) => /^\d{1,5}$/.test(v) && Number(v) >= 1,
  BYSECOND: intList(0, 60, false),
  BYMINUTE: intList(0, 59, false),
  BYHOUR: intList(0, 23, false),
  BYDAY: (v) => v.split(',').every((p) => new RegExp(`^([+-]?([1-9]|[1-4]\\d|5[0-3]))?${WEEKDAY}$`).test(p)),
  BYMONTHDAY: intList(1, 31, true),
  BYYEARDAY: intList(1, 366, true),
  BYWEEKNO: intList(1, 53, true),
  BYMONTH: intList(1, 12, false),
  BYSETPOS: intList(1, 366, true),
  WKST: (v) => new RegExp(`^${WEEKDAY}$`).test(v),
};

function isRealDate(v: string): boolean {
  const y = Number(v.slice(0, 4));
  const m = Number(v.slice(4, 6));
  const d = Number(v.slice(6, 8));
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

type RruleCheck = { ok: true; rule: string } | { ok: false; reason: string };

/** Normalizes (`RRULE:` prefix dropped, upper case) and checks a rule. */
export function checkRrule(input: string): RruleCheck {
  const rule = input.trim().replace(/^RRULE:/i, '').toUpperCase();
  if (!rule) return { ok: false, reason: 'is empty' };
  const seen = new Set<string>();
  for (const part of rule.split(';')) {
    const eq = part.indexOf('=');
    const key = eq > 0 ? part.slice(0, eq) : part;
    const value = eq > 0 ? part.slice(eq + 1) : '';
    const check = PARTS[key];
    if (!check) return { ok: false, reason: `has an unknown part "${key}"` };
    if (seen.has(key)) return { ok: false, reason: `repeats ${key}` };
    seen.add(key);
    if (!value || !check(value)) return { ok: false, reason: `has an invalid ${key} value "${value}"` };
  }
  if (!seen.has('FREQ')) return { ok: false, reason: 'needs a FREQ' };
  if (seen.has('COUNT') && seen.has('UNTIL')) return { ok: false, reason: 'cannot have both COUNT and UNTIL' };
  try {
    RRule.fromString(rule);
  } catch {
    return { ok: false, reason: 'cannot be read' };
  }
  return { ok: true, rule };
}

const UNTIL_PART = /(^|;)UNTIL=(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z?))?(?=;|$)/;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const ymd = (w: { year: number; month: number; day: number }) => `${pad(w.year, 4)}${pad(w.month)}${pad(w.day)}`;

/** The instant of a wall time in `zone`; before FIRST_YEAR (no event starts that early) read as UTC. */
function wallToEpoch(f: { year: number; month: number; day: number; hour: number; minute: number; second: number }, zone: string): number {
  if (f.year >= FIRST_YEAR) return wallTimeToEpoch(f, zone);
  const d = new Date(0);
  d.setUTCFullYear(f.year, f.month - 1, f.day); // Date.UTC would read years below 100 as 19xx
  d.setUTCHours(f.hour, f.minute, f.second);
  return d.getTime();
}

/**
 * The rule with its UNTIL in the form RFC 5545 §3.3.10 requires beside the event's DTSTART:
 * timed events (DTSTART with a TZID) need a UTC date-time, all-day events (DTSTART a DATE)
 * a DATE. For a timed event, a date UNTIL means the end of that day (23:59:59) and a floating
 * one a wall time, both in the event's zone; for an all-day event, a date-time UNTIL becomes
 * its date (a UTC one: its date in the event's zone). Anything else is returned as it is.
 */
export function normalizeUntil(rule: string, event: { isAllDay: boolean; timezone: string }): string {
  const m = UNTIL_PART.exec(rule);
  if (!m) return rule;
  const [whole, lead, ys, mos, ds, hs, mis, ss, z] = m;
  const date = { year: Number(ys), month: Number(mos), day: Number(ds) };
  let until: string;
  if (event.isAllDay) {
    if (hs === undefined) return rule;
    const time = { hour: Number(hs), minute: Number(mis), second: Number(ss) };
    until = z ? ymd(wallClock(wallToEpoch({ ...date, ...time }, 'UTC'), event.timezone)) : `${ys}${mos}${ds}`;
  } else {
    if (z) return rule;
    const time = hs === undefined ? { hour: 23, minute: 59, second: 59 } : { hour: Number(hs), minute: Number(mis), second: Number(ss) };
    const w = wallClock(Math.min(wallToEpoch({ ...date, ...time }, event.timezone), LAST_INSTANT_MS), 'UTC');
    until = `${ymd(w)}T${pad(w.hour)}${pad(w.minute)}${pad(w.second)}Z`;
  }
  return rule.slice(0, m.index) + `${lead}UNTIL=${until}` + rule.slice(m.index + whole.length);
}

const DAY = '(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day';
/** The last comma of a list of days: "Monday, Wednesday, Friday" reads "Monday, Wednesday and Friday". */
const LAST_DAY_COMMA = new RegExp(`(${DAY}), (${DAY})(?!, ${DAY})`);

const UNITS: Record<string, string> = {
  SECONDLY: 'second',
  MINUTELY: 'minute',
  HOURLY: 'hour',
  DAILY: 'day',
  WEEKLY: 'week',
  MONTHLY: 'month',
  YEARLY: 'year',
};
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/**
 * The plain reading of a checked rule from its frequency, interval, count and end, for rules
 * rrule cannot put in words (it answers "RRule error: …" for SECONDLY); BY… parts it does
 * not spell out make it approximate.
 */
function plainReading(rule: string): string | null {
  const parts = new Map(rule.split(';').map((p) => p.split('=') as [string, string]));
  const unit = UNITS[parts.get('FREQ') ?? ''];
  if (!unit) return null;
  const interval = Number(parts.get('INTERVAL') ?? '1');
  let text = interval === 1 ? `every ${unit}` : `every ${interval} ${unit}s`;
  const until = parts.get('UNTIL');
  const count = parts.get('COUNT');
  if (until) text += ` until ${MONTH_NAMES[Number(until.slice(4, 6)) - 1]} ${Number(until.slice(6, 8))}, ${until.slice(0, 4)}`;
  else if (count) text += Number(count) === 1 ? ', once' : `, ${Number(count)} times`;
  if ([...parts.keys()].some((key) => key.startsWith('BY'))) text += ' (approximately)';
  return text;
}

/** The rule with a UTC UNTIL given as its date in `zone`, for reading it out (rrule names the UTC day). */
export function untilAsLocalDate(rule: string, zone: string): string {
  const m = UNTIL_PART.exec(rule);
  if (!m || !m[8]) return rule;
  const [whole, lead, ys, mos, ds, hs, mis, ss] = m;
  const instant = wallToEpoch({ year: Number(ys), month: Number(mos), day: Number(ds), hour: Number(hs), minute: Number(mis), second: Number(ss) }, 'UTC');
  return rule.slice(0, m.index) + `${lead}UNTIL=${ymd(wallClock(instant, zone))}` + rule.slice(m.index + whole.length);
}

/**
 * English reading of a (checked) rule: "every week on Tuesday and Thursday, 10 times".
 * rrule's own text, with its count ("for 10 times") and day lists ("Tuesday, Thursday")
 * put the way people write them; the plain reading where rrule has none. With the event's
 * zone, a UTC UNTIL is read as the day it falls on there.
 */
export function recurrenceText(checked: string, zone?: string): string | null {
  const rule = zone ? untilAsLocalDate(checked, zone) : checked;
  let text: string;
  try {
    text = RRule.fromString(rule).toText();
  } catch {
    return plainReading(rule);
  }
  // rrule puts its failure in the text itself: "RRule error: Unable to fully convert…".
  if (/^RRule error/i.test(text)) return plainReading(rule);
  return text
    .replace(LAST_DAY_COMMA, '$1 and $2')
    .replace(/ for 1 time$/, ', once')
    .replace(/ for (\d+) times$/, ', $1 times');
}
