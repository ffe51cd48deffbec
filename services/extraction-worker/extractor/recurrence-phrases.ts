import type { TextScan } from './text-scan';

/**
 * Repetition in words ("every Wednesday", "Tuesdays and Thursdays", "Mon/Wed/Fri", "every weekday",
 * "every other week", "monthly", "the first Monday of every month", "for 10 weeks") as the
 * parts of an RFC 5545 RRULE. "until <month> [year]" is taken right after, by the rules
 * extractor (takeUntilMonth), before chrono could read it as the start; "until <date>" is
 * read later, with the dates.
 */
type Freq = 'DAILY' | 'WEEKLY' | 'MONTHLY' | 'YEARLY';

export interface Recurrence {
  freq: Freq;
  interval: number;
  /** RRULE BYDAY values: `MO`, or with an ordinal for monthly rules, `1MO`, `-1FR`. */
  byDay: string[];
  byMonthDay: number | null;
  count: number | null;
  /**
   * How long the repetition goes on from its first day ("for 2 months", or days the rule
   * does not fill one by one), when no count can say it: read as an UNTIL once that day is known.
   */
  lasts: { months: number } | { days: number } | null;
  start: number;
  end: number;
}

const DAY_CODES = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];
const WEEK_ORDER = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR'];
const WEEKEND = ['SA', 'SU'];

const DAY = String.raw`(?:sun(?:day)?|mon(?:day)?|tue(?:s|sday)?|wed(?:s|nesday)?|thu(?:rs?|rsday)?|fri(?:day)?|sat(?:urday)?)`;
// A day name with an optional plural s: the words of DAY followed by `s?`, each spelled one
// way only. Written as DAY + `s?`, "tues" read as "tue"+"s" or "tues"+"" (and "weds",
// "thurs" alike), so a list of them that failed at its end was tried in 2^n ways: 228
// characters of "every tuesandtuesand…x" took a minute.
const DAY_WORD = String.raw`(?:sun(?:days?|s)?|mon(?:days?|s)?|tue(?:s(?:days?|s)?)?|wed(?:ss?|nesdays?)?|thu(?:s|r(?:s(?:days?|s)?)?)?|fri(?:days?|s)?|sat(?:urdays?|s)?)`;
const DAYS = String.raw`(?:sundays|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays)`;
// Two spaces before: "Tues & Thurs" reaches these rules as "tue  & Thurs" (see normalize).
const LIST_SEPARATOR = String.raw`[ ]{0,2}(?:,|&|\/|and|or)[ ]?(?:and[ ])?`;
const AND_SEPARATOR = String.raw`[ ]{0,2}(?:,|&|\/|and)[ ]?(?:and[ ])?`;
const DAY_LIST = String.raw`${DAY_WORD}(?:${LIST_SEPARATOR}${DAY_WORD})*`;
const SMALL = String.raw`(\d{1,2}|two|three|four|five|six)`;
const SMALL_NUMBERS: Record<string, number> = { two: 2, three: 3, four: 4, five: 5, six: 6 };
const ORDINALS: Record<string, number> = { first: 1, '1st': 1, second: 2, '2nd': 2, third: 3, '3rd': 3, fourth: 4, '4th': 4, last: -1 };

const small = (s: string | undefined) => (s ? (SMALL_NUMBERS[s.toLowerCase()] ?? Number(s)) : 1);

/** `tue`, `Thursdays`, `weds` → `TU`, `TH`, `WE` */
function dayCode(word: string): string {
  const lower = word.toLowerCase();
  const index = ['su', 'mo', 'tu', 'we', 'th', 'fr', 'sa'].indexOf(lower.slice(0, 2));
  return DAY_CODES[index];
}

function dayList(text: string): string[] {
  const codes: string[] = [];
  for (const m of text.matchAll(new RegExp(DAY, 'gi'))) {
    const code = dayCode(m[0]);
    if (code && !codes.includes(code)) codes.push(code);
  }
  return codes.sort((a, b) => WEEK_ORDER.indexOf(a) - WEEK_ORDER.indexOf(b));
}

type Rule = Omit<Recurrence, 'start' | 'end' | 'count' | 'lasts'>;
interface PhraseRule {
  pattern: RegExp;
  read: (m: RegExpMatchArray) => Rule | null;
}

const rule = (freq: Freq, interval = 1, byDay: string[] = [], byMonthDay: number | null = null): Rule => ({ freq, interval, byDay, byMonthDay });

const PERIODS: Record<string, Freq> = { day: 'DAILY', week: 'WEEKLY', month: 'MONTHLY', year: 'YEARLY' };

const PHRASES: PhraseRule[] = [
  // every first Monday of the month · on the last Friday of every month
  {
    pattern: new RegExp(String.raw`\b(?:(?:every|each|on the|the)[ ])?(first|1st|second|2nd|third|3rd|fourth|4th|last)[ ](${DAY})(?:[ ]of)?(?:[ ](?:every|each|the))?[ ]month\b`, 'gi'),
    read: (m) => (/^(every|each)/i.test(m[0]) || /(every|each)[ ]month$/i.test(m[0]) ? rule('MONTHLY', 1, [`${ORDINALS[m[1].toLowerCase()]}${dayCode(m[2])}`]) : null),
  },
  // the 15th of every month · every month on the 15th
  {
    pattern: /\b(?:(?:on[ ])?the[ ](\d{1,2})(?:st|nd|rd|th)[ ]of[ ](?:every|each)[ ]month|(?:every|each)[ ]month[ ]on[ ]the[ ](\d{1,2})(?:st|nd|rd|th))\b/gi,
    read: (m) => {
      const day = Number(m[1] ?? m[2]);
      return day >= 1 && day <= 31 ? rule('MONTHLY', 1, [], day) : null;
    },
  },
  // every (other) Tuesday and Thursday
  {
    pattern: new RegExp(String.raw`\b(?:every|each)[ ](other[ ])?(${DAY_LIST})\b`, 'gi'),
    read: (m) => rule('WEEKLY', m[1] ? 2 : 1, dayList(m[2])),
  },
  // every weekday · every (other|2) week(s) (on Monday) · every morning
  {
    pattern: new RegExp(String.raw`\b(?:every|each)[ ](other[ ])?(?:${SMALL}[ ])?(weekdays?|weekends?|days?|weeks?|months?|years?|mornings?|evenings?|afternoons?|nights?)(?:[ ]on[ ](${DAY_LIST}))?\b`, 'gi'),
    read: (m) => {
      const interval = m[1] ? 2 : small(m[2]);
      const unit = m[3].toLowerCase().replace(/s$/, '');
      if (unit === 'weekday') return rule('WEEKLY', interval, WEEKDAYS);
      if (unit === 'weekend') return rule('WEEKLY', interval, WEEKEND);
      if (unit === 'week') return rule('WEEKLY', interval, m[4] ? dayList(m[4]) : []);
      return rule(PERIODS[unit] ?? 'DAILY', interval);
    },
  },
  // weekly (on Tuesdays) · biweekly · daily · monthly · annually
  {
    // Only as an adverb: "Weekly sync" and "Quarterly review" are names, not repetitions.
    pattern: new RegExp(
      String.raw`\b(daily|weekly|bi-?weekly|fortnightly|monthly|bi-?monthly|quarterly|yearly|annually)\b(?:[ ]on[ ](${DAY_LIST}))?(?=[ ]*(?:$|[,.;:!?)\n]|(?:on|at|from|starting|until|for|in|between)\b|\d))`,
      'gi',
    ),
    read: (m) => {
      const word = m[1].toLowerCase().replace('-', '');
      const days = m[2] ? dayList(m[2]) : [];
      if (word === 'daily') return rule('DAILY');
      if (word === 'weekly') return rule('WEEKLY', 1, days);
      if (word === 'biweekly' || word === 'fortnightly') return rule('WEEKLY', 2, days);
      if (word === 'monthly') return rule('MONTHLY');
      if (word === 'bimonthly') return rule('MONTHLY', 2);
      if (word === 'quarterly') return rule('MONTHLY', 3);
      return rule('YEARLY');
    },
  },
  // (on) Tuesdays and Thursdays · weekdays · weekends
  {
    // Every day of the list ends a word. With the boundary only after the list, a list
    // that ran into a letter ("…Mondays andW") failed only at its end, after being read
    // again from each of its days: quadratic in its length.
    pattern: new RegExp(String.raw`\b(?:on[ ])?(${DAYS}\b(?:${AND_SEPARATOR}${DAY_WORD}\b)*|weekdays\b|weekends\b)`, 'gi'),
    read: (m) => {
      const words = m[1].toLowerCase();
      if (words === 'weekdays') return rule('WEEKLY', 1, WEEKDAYS);
      if (words === 'weekends') return rule('WEEKLY', 1, WEEKEND);
      return rule('WEEKLY', 1, dayList(m[1]));
    },
  },
  // Mon/Wed/Fri · Tues & Thurs · Tuesday and Friday (no "every"): a weekly schedule when
  // slashed or when the days are apart; "Sat & Sun", "Mon, Tue" are days in a row, not a rule.
  {
    pattern: new RegExp(String.raw`\b(?:on[ ])?(${DAY_WORD}\b(?:${AND_SEPARATOR}${DAY_WORD}\b)+)`, 'gi'),
    read: (m) => {
      const days = dayList(m[1]);
      if (days.length < 2 || (!m[1].includes('/') && inARow(days))) return null;
      return rule('WEEKLY', 1, days);
    },
  },
];

/** Days that follow each other in the week (Sunday to Monday too), as in "Fri, Sat & Sun". */
function inARow(days: string[]): boolean {
  const at = days.map((d) => WEEK_ORDER.indexOf(d));
  const gaps = at.map((a, i) => (at[(i + 1) % at.length] - a + 7) % 7);
  // In a row when every gap but one (the way back round the week) is a single day.
  return gaps.filter((g) => g !== 1).length <= 1;
}

// "for 6 weeks", "10 sessions", "for two months", "for a month": how many times, or how long.
const COUNT = new RegExp(
  String.raw`\b(?:for[ ](a|one)[ ](week|month)|(?:for[ ])?(\d{1,3}|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)[ ](weeks?|months?|days?|times|sessions|occurrences|classes|meetings|lessons))\b`,
  'gi',
);
const COUNT_WORDS: Record<string, number> = { a: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12 };

/**
 * "for n weeks/days/months" as a count where the rule fills that time evenly (a weekly rule
 * has its days in each of n weeks: "Tuesdays and Thursdays for 6 weeks" is 12 times; a daily
 * rule, every day; a monthly rule, once a month), else as a length from the first day
 * (months of a daily or weekly rule, as months differ in length and in how many of a
 * weekday they hold; days of a weekly rule).
 */
function lengthOf(r: Rule, n: number, unit: 'day' | 'week' | 'month'): Pick<Recurrence, 'count' | 'lasts'> {
  const times = (periods: number, perPeriod = 1) => ({ count: Math.ceil(periods / r.interval) * perPeriod, lasts: null });
  const days = unit === 'week' ? 7 * n : n;
  if (unit === 'month') return r.freq === 'MONTHLY' ? times(n) : { count: null, lasts: { months: n } };
  if (r.freq === 'DAILY') return times(days);
  if (r.freq === 'WEEKLY' && unit === 'week') return times(n, Math.max(1, r.byDay.length));
  return { count: null, lasts: { days } };
}

/** The first repetition phrase of the text (and a count, when one is given), marked. */
export function findRecurrence(scan: TextScan): Recurrence | null {
  let found: Recurrence | null = null;
  const read: Recurrence[] = [];
  for (const phrase of PHRASES) {
    for (const m of scan.text.matchAll(phrase.pattern)) {
      if (scan.overlaps(m.index, m.index + m[0].length)) continue;
      const rule = phrase.read(m);
      if (!rule) continue;
      const one = { ...rule, count: null, lasts: null, start: m.index, end: m.index + m[0].length };
      read.push(one);
      if (!found || m.index < found.start) found = one;
      break;
    }
  }
  if (!found) return null;
  // "Weekly 1:1 Thursdays at 4", "Biweekly sync Tuesdays": the days are the later phrase's;
  // the frequency word, which names the event too, stays in the title.
  const days = found.freq === 'WEEKLY' && !found.byDay.length ? read.find((r) => r.freq === 'WEEKLY' && r.byDay.length && r.interval === 1) : undefined;
  if (days) found = { ...days, interval: found.interval };
  scan.mark('recurrence', found.start, found.end);
  for (const m of scan.text.matchAll(COUNT)) {
    if (scan.overlaps(m.index, m.index + m[0].length)) continue;
    const number = (m[1] ?? m[3]).toLowerCase();
    const n = COUNT_WORDS[number] ?? Number(number);
    const unit = (m[2] ?? m[4]).toLowerCase().replace(/s$/, '');
    const length = unit === 'week' || unit === 'month' || unit === 'day' ? lengthOf(found, n, unit) : { count: n, lasts: null };
    if (n >= 1 && n <= 1000 && (length.count === null || length.count <= 1000)) {
      Object.assign(found, length);
      scan.mark('recurrence', m.index, m.index + m[0].length);
    }
    break;
  }
  return found;
}

/** The RRULE text, parts in the customary order. */
export function toRrule(r: Recurrence, until: string | null): string {
  const parts = [`FREQ=${r.freq}`];
  if (r.interval > 1) parts.push(`INTERVAL=${r.interval}`);
  if (r.byDay.length) parts.push(`BYDAY=${r.byDay.join(',')}`);
  if (r.byMonthDay) parts.push(`BYMONTHDAY=${r.byMonthDay}`);
  if (r.count) parts.push(`COUNT=${r.count}`);
  else if (until) parts.push(`UNTIL=${until}`);
  return parts.join(';');
}
