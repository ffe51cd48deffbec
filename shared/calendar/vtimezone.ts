import { intlOffsetMinutes, zoneAbbreviation } from './time-zones';

/*
 * VTIMEZONE components (RFC 5545 §3.6.5) written from the same time-zone data as every
 * offset this service prints: the runtime's IANA database, through Intl. Packaged VTIMEZONE
 * snapshots go stale (one we used still had daylight time for Mexico City, abolished in 2022)
 * and then disagree with the offsets in our own API answers and links.
 *
 * A component describes the changes of the years a file's dates fall in (YearSpan), with a
 * year of margin before and five after; what it says of earlier years is not meant to be
 * read.
 * Parsers differ in how they read anything but the plainest forms, so only these are used:
 *
 * - Changes that follow a yearly rule for three years or more: one observance with a yearly
 *   RRULE ("last Sunday of March at 02:00"), whose DTSTART is the first change, bounded by
 *   a COUNT unless the rule is still in force at the end of the years looked at.
 * - Every other change (Morocco's Ramadan changes, Egypt's "Friday after the last Thursday
 *   of October", rule changes): one observance of its own, a DTSTART and nothing else.
 *   RDATE lists are not used: ical.js (Thunderbird) reads only the first date of an RDATE
 *   property and does not count DTSTART as a change when the observance has RDATEs.
 * - Before the first change, an observance with the offset in force when the years begin.
 *
 * When every change of those years follows rules that held all along, the component has
 * the form Outlook expects: one STANDARD and one DAYLIGHT observance with yearly RRULEs from
 * 1970 (or a single STANDARD for a zone without changes). Clients that know the IANA name
 * (Google, Apple) use their own database for the TZID anyway.
 */

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** How far apart the offset is read when looking for changes (see transitionsOfYear). */
const SCAN_STEP_MS = 4 * DAY_MS;
const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];
/** Years looked at after the last year of a file: enough to tell a yearly rule that goes on. */
const YEARS_AFTER = 5;
/** Changes one a year under one rule at least this often become an RRULE. */
const MIN_RULE_YEARS = 3;
/** The year the Outlook form's rules start in. */
const RULE_EPOCH_YEAR = 1970;

/**
 * The years the dates of a file fall in (UTC years do: the component covers a year more on
 * each side).
 */
export interface YearSpan {
  from: number;
  to: number;
}

interface Transition {
  /** The instant of the change. */
  atMs: number;
  /** Offsets in minutes before and after. */
  from: number;
  to: number;
}

/** Wall time just before a transition (in the offset it leaves), as UTC fields. */
const localBefore = (t: Transition) => new Date(t.atMs + t.from * MINUTE_MS);

const yearTransitions = new Map<string, Transition[]>();
const YEAR_TRANSITIONS_MAX = 100_000;

/**
 * Every offset change of the zone in (1 January, next 1 January] UTC of a year, to the
 * minute. The offset is read every four days (each reading costs about a microsecond, and
 * a feed's zones can span decades); after each change found the reading goes on from it, so
 * two changes between readings are both found unless the second undoes the first. No two
 * changes in the IANA database since 1900 are less than six days apart (the shortest:
 * Brazil, October 2000, 6.9 days).
 */
function transitionsOfYear(zone: string, year: number): Transition[] {
  const key = `${zone}|${year}`;
  let found = yearTransitions.get(key);
  if (found) return found;
  found = [];
  const end = Date.UTC(year + 1, 0, 1);
  let from = Date.UTC(year, 0, 1);
  let prev = intlOffsetMinutes(zone, from);
  while (from < end && !Number.isNaN(prev)) {
    const t = Math.min(from + SCAN_STEP_MS, end);
    const off = intlOffsetMinutes(zone, t);
    if (off === prev) {
      from = t;
      continue;
    }
    let lo = from;
    let hi = t;
    while (hi - lo > MINUTE_MS) {
      const mid = lo + Math.floor((hi - lo) / (2 * MINUTE_MS)) * MINUTE_MS;
      if (intlOffsetMinutes(zone, mid) === prev) lo = mid;
      else hi = mid;
    }
    const to = hi === t ? off : intlOffsetMinutes(zone, hi);
    found.push({ atMs: hi, from: prev, to });
    prev = to;
    from = hi;
  }
  if (yearTransitions.size >= YEAR_TRANSITIONS_MAX) yearTransitions.clear();
  yearTransitions.set(key, found);
  return found;
}

/**
 * True when the instant's wall time is also another instant's: the hour repeated when the
 * clocks go back (either pass). A TZID date-time names only the first of them.
 */
export function inRepeatedWallTime(zone: string, ms: number): boolean {
  const year = new Date(ms).getUTCFullYear();
  for (let y = year - 1; y <= year + 1; y++) {
    for (const t of transitionsOfYear(zone, y)) {
      const repeated = (t.from - t.to) * MINUTE_MS;
      if (repeated > 0 && ms >= t.atMs - repeated && ms < t.atMs + repeated) return true;
    }
  }
  return false;
}

/** A yearly rule: which day of `month` (by month day, nth/last weekday or weekday in a window). */
interface YearlyRule {
  month: number; // 1-12
  byDay?: string; // "-1SU", "2SU", "FR"
  byMonthDay?: number[];
  /** Wall time of the change, in the offset it leaves. */
  hour: number;
  minute: number;
}

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** The day of the month a rule picks in a year. */
function ruleDay(rule: YearlyRule, year: number): number | null {
  if (!rule.byDay) return rule.byMonthDay?.[0] ?? null;
  const dim = daysInMonth(year, rule.month);
  const first = new Date(Date.UTC(year, rule.month - 1, 1)).getUTCDay();
  const weekday = WEEKDAYS.indexOf(rule.byDay.slice(-2));
  const n = rule.byDay.length > 2 ? Number(rule.byDay.slice(0, -2)) : 0;
  const days: number[] = [];
  for (let day = 1 + ((weekday - first + 7) % 7); day <= dim; day += 7) {
    if (!rule.byMonthDay || rule.byMonthDay.includes(day)) days.push(day);
  }
  if (n === 0) return days.length === 1 ? days[0] : null;
  return (n > 0 ? days[n - 1] : days[days.length + n]) ?? null;
}

/** Rules that put a change on this local date, most conventional first. */
function candidateRules(local: Date): YearlyRule[] {
  const month = local.getUTCMonth() + 1;
  const day = local.getUTCDate();
  const weekday = WEEKDAYS[local.getUTCDay()];
  const time = { month, hour: local.getUTCHours(), minute: local.getUTCMinutes() };
  const rules: YearlyRule[] = [];
  if (day + 7 > daysInMonth(local.getUTCFullYear(), month)) rules.push({ ...time, byDay: `-1${weekday}` });
  if (day <= 28) rules.push({ ...time, byDay: `${Math.ceil(day / 7)}${weekday}` });
  rules.push({ ...time, byMonthDay: [day] });
  for (let first = Math.max(1, day - 6); first <= day && first + 6 <= 31; first++) {
    rules.push({ ...time, byDay: weekday, byMonthDay: Array.from({ length: 7 }, (_, i) => first + i) });
  }
  return rules;
}

const fits = (rule: YearlyRule, local: Date) =>
  local.getUTCMonth() + 1 === rule.month &&
  local.getUTCHours() === rule.hour &&
  local.getUTCMinutes() === rule.minute &&
  ruleDay(rule, local.getUTCFullYear()) === local.getUTCDate();

/** Changes of one kind (offsets from → to), one a year, and the rules that fit them all. */
interface Series {
  members: Transition[];
  rules: YearlyRule[];
}

/**
 * The changes grouped into series: a change joins the series of its kind when it comes the
 * year after that series' last change and a rule fits them all; otherwise it starts one.
 */
function seriesOf(all: Transition[]): Series[] {
  const done: Series[] = [];
  const open = new Map<string, Series>();
  for (const t of all) {
    const key = `${t.from}>${t.to}`;
    const local = localBefore(t);
    const current = open.get(key);
    if (current) {
      const lastYear = localBefore(current.members[current.members.length - 1]).getUTCFullYear();
      const rules = lastYear + 1 === local.getUTCFullYear() ? current.rules.filter((rule) => fits(rule, local)) : [];
      if (rules.length) {
        current.members.push(t);
        current.rules = rules;
        continue;
      }
      done.push(current);
    }
    open.set(key, { members: [t], rules: candidateRules(local) });
  }
  return [...done, ...open.values()];
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const localStamp = (d: Date) =>
  `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
const offsetText = (minutes: number) => `${minutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(minutes) / 60))}${pad(Math.abs(minutes) % 60)}`;

function observance(kind: 'STANDARD' | 'DAYLIGHT', name: string, from: number, to: number, dtstart: string, extra: string[]): string[] {
  return [
    `BEGIN:${kind}`,
    `TZNAME:${name}`,
    `TZOFFSETFROM:${offsetText(from)}`,
    `TZOFFSETTO:${offsetText(to)}`,
    `DTSTART:${dtstart}`,
    ...extra,
    `END:${kind}`,
  ];
}

const kindOf = (t: Transition) => (t.to > t.from ? 'DAYLIGHT' : 'STANDARD');

function ruleText(rule: YearlyRule): string {
  const parts = ['FREQ=YEARLY', `BYMONTH=${rule.month}`];
  if (rule.byDay) parts.push(`BYDAY=${rule.byDay}`);
  if (rule.byMonthDay) parts.push(`BYMONTHDAY=${rule.byMonthDay.join(',')}`);
  return parts.join(';');
}

/**
 * The lines of a zone's VTIMEZONE for a file whose dates fall in `span` (years in the
 * zone's wall time), in the forms described above; [] for a name the runtime does not know.
 */
export function vtimezoneLines(zone: string, span: YearSpan): string[] {
  if (Number.isNaN(intlOffsetMinutes(zone, 0))) return [];
  const firstYear = span.from - 1;
  const lastYear = Math.max(span.to, span.from) + YEARS_AFTER;
  const all: Transition[] = [];
  for (let year = firstYear; year <= lastYear; year++) all.push(...transitionsOfYear(zone, year));
  const head = ['BEGIN:VTIMEZONE', `TZID:${zone}`, `X-LIC-LOCATION:${zone}`];
  const startMs = Date.UTC(firstYear, 0, 1);
  const initial = intlOffsetMinutes(zone, startMs);
  // The first observance starts in 1970, or when the years looked at begin if that is
  // earlier: what it says of the years before those is never read for a date of the file.
  const firstStamp = localStamp(new Date(Date.UTC(firstYear > RULE_EPOCH_YEAR ? RULE_EPOCH_YEAR : firstYear, 0, 1)));
  if (!all.length) {
    return [...head, ...observance('STANDARD', zoneAbbreviation(zone, startMs, initial), initial, initial, firstStamp, []), 'END:VTIMEZONE'];
  }

  const series = seriesOf(all);
  const yearOf = (t: Transition) => localBefore(t).getUTCFullYear();
  const ongoing = (s: Series) => s.members.length >= MIN_RULE_YEARS && yearOf(s.members[s.members.length - 1]) === lastYear;
  const body: string[] = [];

  // The Outlook form: every change of these years under rules in force all along.
  const outlook =
    firstYear > RULE_EPOCH_YEAR && series.every((s) => ongoing(s) && yearOf(s.members[0]) === firstYear && ruleDay(s.rules[0], RULE_EPOCH_YEAR) !== null);
  if (outlook) {
    for (const { members, rules } of series) {
      const [t] = members;
      const rule = rules[0];
      const day = ruleDay(rule, RULE_EPOCH_YEAR) as number;
      const dtstart = localStamp(new Date(Date.UTC(RULE_EPOCH_YEAR, rule.month - 1, day, rule.hour, rule.minute)));
      body.push(...observance(kindOf(t), zoneAbbreviation(zone, t.atMs, t.to), t.from, t.to, dtstart, [`RRULE:${ruleText(rule)}`]));
    }
    return [...head, ...body, 'END:VTIMEZONE'];
  }

  // The offset before the first change (daylight time when that change ends it), then
  // every change, in the order they happen.
  const initialKind = all[0].to < all[0].from ? 'DAYLIGHT' : 'STANDARD';
  body.push(...observance(initialKind, zoneAbbreviation(zone, startMs, initial), initial, initial, firstStamp, []));
  const changes: { atMs: number; lines: string[] }[] = [];
  for (const s of series) {
    if (s.members.length >= MIN_RULE_YEARS) {
      // A rule that ended is bounded by its COUNT: python-icalendar (through dateutil)
      // refuses the UTC UNTIL that RFC 5545 requires in a VTIMEZONE.
      const [t] = s.members;
      const count = ongoing(s) ? '' : `;COUNT=${s.members.length}`;
      const lines = observance(kindOf(t), zoneAbbreviation(zone, t.atMs, t.to), t.from, t.to, localStamp(localBefore(t)), [`RRULE:${ruleText(s.rules[0])}${count}`]);
      changes.push({ atMs: t.atMs, lines });
    } else {
      for (const t of s.members) {
        changes.push({ atMs: t.atMs, lines: observance(kindOf(t), zoneAbbreviation(zone, t.atMs, t.to), t.from, t.to, localStamp(localBefore(t)), []) });
      }
    }
  }
  for (const change of changes.sort((a, b) => a.atMs - b.atMs)) body.push(...change.lines);
  return [...head, ...body, 'END:VTIMEZONE'];
}
