import { IANAZone } from 'luxon';
import { zoneAbbreviation } from './time-zones';

/*
 * VTIMEZONE components (RFC 5545 §3.6.5) written from the same time-zone data as every
 * offset this service prints: the runtime's IANA database, through luxon. Packaged VTIMEZONE
 * snapshots go stale (one we used still had daylight time for Mexico City, abolished in 2022)
 * and then disagree with the offsets in our own API answers and links.
 *
 * The component describes the zone's rules in force from last year on, in the form every
 * client reads, Outlook included: one STANDARD and one DAYLIGHT observance, each a yearly
 * RRULE from 1970 ("last Sunday of March at 02:00"), or a single STANDARD for a zone without
 * daylight time. Clients that know the IANA name (Google, Apple) use their own database for
 * the TZID anyway. A zone whose transitions follow no yearly rule (Morocco's Ramadan
 * changes) gets its actual transitions, year by year, as RDATEs instead.
 */

const DAY_MS = 86_400_000;
const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];
/** The years a yearly rule must fit (from last year on), and those RDATEs cover for the others. */
const RULE_YEARS = 6;
const RDATE_YEARS = 12;

interface Transition {
  /** The instant of the change. */
  atMs: number;
  /** Offsets in minutes before and after. */
  from: number;
  to: number;
}

/** Wall time just before a transition (in the offset it leaves), as UTC fields. */
const localBefore = (t: Transition) => new Date(t.atMs + t.from * 60_000);

/** Every offset change of the zone in [fromMs, toMs), to the minute. */
function transitions(zone: IANAZone, fromMs: number, toMs: number): Transition[] {
  const found: Transition[] = [];
  let prev = zone.offset(fromMs);
  for (let t = fromMs + DAY_MS; t <= toMs; t += DAY_MS) {
    const off = zone.offset(t);
    if (off === prev) continue;
    let lo = t - DAY_MS;
    let hi = t;
    while (hi - lo > 60_000) {
      const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
      if (zone.offset(mid) === prev) lo = mid;
      else hi = mid;
    }
    found.push({ atMs: hi, from: prev, to: off });
    prev = off;
  }
  return found;
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
  const dim = daysInMonth(year, rule.month);
  const weekdayOf = (day: number) => WEEKDAYS[new Date(Date.UTC(year, rule.month - 1, day)).getUTCDay()];
  if (!rule.byDay) return rule.byMonthDay?.[0] ?? null;
  const m = /^(-?\d)?([A-Z]{2})$/.exec(rule.byDay) as RegExpExecArray;
  const n = m[1] ? Number(m[1]) : 0;
  const days = Array.from({ length: dim }, (_, i) => i + 1).filter(
    (day) => weekdayOf(day) === m[2] && (!rule.byMonthDay || rule.byMonthDay.includes(day)),
  );
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

/** The first rule that fits every one of these transitions (one per year), if any. */
function fittingRule(series: Transition[]): YearlyRule | null {
  const first = localBefore(series[0]);
  return (
    candidateRules(first).find((rule) =>
      series.every((t) => {
        const local = localBefore(t);
        return (
          local.getUTCMonth() + 1 === rule.month &&
          local.getUTCHours() === rule.hour &&
          local.getUTCMinutes() === rule.minute &&
          ruleDay(rule, local.getUTCFullYear()) === local.getUTCDate()
        );
      }),
    ) ?? null
  );
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const localStamp = (d: Date) =>
  `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
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

/**
 * The lines of a zone's VTIMEZONE for files made in `year`: right from last year on (see
 * above). A zone without changes in those years gets one STANDARD observance.
 */
export function vtimezoneLines(zone: string, year: number): string[] {
  const tz = IANAZone.create(zone);
  if (!tz.isValid) return [];
  const start = Date.UTC(year - 1, 0, 1);
  const head = ['BEGIN:VTIMEZONE', `TZID:${zone}`, `X-LIC-LOCATION:${zone}`];
  const recent = transitions(tz, start, Date.UTC(year - 1 + RULE_YEARS, 0, 1));
  if (!recent.length) {
    const offset = tz.offset(start);
    return [...head, ...observance('STANDARD', zoneAbbreviation(zone, start, offset), offset, offset, '19700101T000000', []), 'END:VTIMEZONE'];
  }

  // The changes of each kind (from → to), one a year when the zone follows a yearly rule.
  const series = new Map<string, Transition[]>();
  for (const t of recent) series.set(`${t.from}>${t.to}`, [...(series.get(`${t.from}>${t.to}`) ?? []), t]);
  const yearly = [...series.values()].every((s) => s.length === RULE_YEARS && new Set(s.map((t) => localBefore(t).getUTCFullYear())).size === RULE_YEARS);
  const rules = yearly ? [...series.values()].map((s) => ({ t: s[0], rule: fittingRule(s) })) : [];
  const body: string[] = [];
  if (rules.length && rules.every((r) => r.rule)) {
    for (const { t, rule } of rules as { t: Transition; rule: YearlyRule }[]) {
      const day = ruleDay(rule, 1970) as number;
      const dtstart = localStamp(new Date(Date.UTC(1970, rule.month - 1, day, rule.hour, rule.minute)));
      const parts = [`FREQ=YEARLY`, `BYMONTH=${rule.month}`];
      if (rule.byDay) parts.push(`BYDAY=${rule.byDay}`);
      if (rule.byMonthDay) parts.push(`BYMONTHDAY=${rule.byMonthDay.join(',')}`);
      body.push(...observance(t.to > t.from ? 'DAYLIGHT' : 'STANDARD', zoneAbbreviation(zone, t.atMs, t.to), t.from, t.to, dtstart, [`RRULE:${parts.join(';')}`]));
    }
  } else {
    // No yearly rule: the actual changes from last year on, each kind with its dates.
    const all = transitions(tz, start, Date.UTC(year + RDATE_YEARS, 0, 1));
    const before = all[0].from;
    body.push(...observance('STANDARD', zoneAbbreviation(zone, all[0].atMs - 1, before), before, before, '19700101T000000', []));
    const kinds = new Map<string, Transition[]>();
    for (const t of all) kinds.set(`${t.from}>${t.to}`, [...(kinds.get(`${t.from}>${t.to}`) ?? []), t]);
    for (const list of kinds.values()) {
      const [first, ...rest] = list;
      const rdates = rest.length ? [`RDATE:${rest.map((t) => localStamp(localBefore(t))).join(',')}`] : [];
      body.push(...observance(first.to > first.from ? 'DAYLIGHT' : 'STANDARD', zoneAbbreviation(zone, first.atMs, first.to), first.from, first.to, localStamp(localBefore(first)), rdates));
    }
  }
  return [...head, ...body, 'END:VTIMEZONE'];
}
