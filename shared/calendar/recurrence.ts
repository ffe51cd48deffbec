import { RRule } from 'rrule';

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

export type RruleCheck = { ok: true; rule: string } | { ok: false; reason: string };

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

const DAY = '(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day';
/** The last comma of a list of days: "Monday, Wednesday, Friday" reads "Monday, Wednesday and Friday". */
const LAST_DAY_COMMA = new RegExp(`(${DAY}), (${DAY})(?!, ${DAY})`);

/**
 * English reading of a (checked) rule: "every week on Tuesday and Thursday, 10 times".
 * rrule's own text, with its count ("for 10 times") and day lists ("Tuesday, Thursday")
 * put the way people write them.
 */
export function recurrenceText(rule: string): string | null {
  let text: string;
  try {
    text = RRule.fromString(rule).toText();
  } catch {
    return null;
  }
  return text
    .replace(LAST_DAY_COMMA, '$1 and $2')
    .replace(/ for 1 time$/, ', once')
    .replace(/ for (\d+) times$/, ', $1 times');
}
