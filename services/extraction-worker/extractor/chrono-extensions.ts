import * as chrono from 'chrono-node';

/**
 * What chrono-node's English reader is taught here, as parsers and refiners of its own kind
 * (chrono runs them with its own, removes overlaps in favour of the longer reading, and
 * merges a day with its time and two ends of a range as it does for its own results):
 *
 * - "this weekend", "next weekend", "the weekend of March 21": Saturday to Sunday; a bare
 *   "weekend" or "weekday" (chrono's Saturday and Monday) is no date.
 * - "Thursday the 19th", "on the 15th": the next such day of a month (with its weekday).
 * - "3/30-4/3": two numeric dates as one range (chrono took "3/30-4" for a date).
 * - "Fri–Sun, March 20–22": the dates, not a range from this Friday.
 * - "March 19 and 20": two days in a row are a span.
 * - "Memorial Day", "Thanksgiving weekend", "Christmas Eve": holidays by name.
 * - "half past six", "quarter to 8": a clock time in words.
 * - "@ 8", "tonite": chat spellings of "at 8" and "tonight".
 * - "Saturday 8-12", "1-3 Sunday": two bare hours next to a day are a time range.
 * - "around 2", "2ish", "~7", "4-ish": a time said roughly is the time.
 * - A meridiem written once for a range holds where it can: "11-1pm" is 11am to 1pm
 *   (chrono made it 11pm), "6-7am" starts in the morning, "noon to 1" ends at 1pm.
 */

type Components = chrono.ParsingComponents;

/** The reference day as wall-clock fields in the reference's zone. */
function referenceDay(context: chrono.ParsingContext): { year: number; month: number; day: number; weekday: number } {
  const d = context.reference.getDateWithAdjustedTimezone();
  return { year: d.getFullYear(), month: d.getMonth() + 1, day: d.getDate(), weekday: d.getDay() };
}

/** A calendar day `days` after the given one (UTC arithmetic: no zone can shift it). */
function plusDays(day: { year: number; month: number; day: number }, days: number): { year: number; month: number; day: number } {
  const d = new Date(Date.UTC(day.year, day.month - 1, day.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** A date whose day and month the text gave (certain), its year implied unless given. */
function dateComponents(context: chrono.ParsingContext, d: { year: number; month: number; day: number }, yearCertain = false): Components {
  const c = context.createParsingComponents({ day: d.day, month: d.month });
  if (yearCertain) c.assign('year', d.year);
  else c.imply('year', d.year);
  return c;
}

// "this weekend", "next weekend", "the weekend", "over the weekend", "the coming weekend".
// A bare "weekend" is often a name ("Weekend retreat"), so a word must lead into it.
const WEEKEND = /\b(?:(this|next|the|coming|upcoming)[ ]+)(?:(?:coming|upcoming)[ ]+)?weekend\b(?!s)(?![ ]+of\b)/i;

/** Saturday to Sunday: this weekend's (the current one on a Saturday or Sunday), or the one after. */
class WeekendParser implements chrono.Parser {
  pattern(): RegExp {
    return WEEKEND;
  }

  extract(context: chrono.ParsingContext, match: RegExpMatchArray): chrono.ParsingResult {
    const today = referenceDay(context);
    // Days back to this weekend's Saturday on a weekend day, else ahead to the coming one.
    const toSaturday = today.weekday === 0 ? -1 : 6 - today.weekday;
    const saturday = plusDays(today, toSaturday + (match[1].toLowerCase() === 'next' ? 7 : 0));
    return context.createParsingResult(match.index ?? 0, match[0], dateComponents(context, saturday), dateComponents(context, plusDays(saturday, 1)));
  }
}

const WEEKDAY_NUMBERS: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };
const MONTH_WORDS = 'jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec';
// "Thursday the 19th", "Tue, the 24th", "on the 15th"; not "the 15th of March" (chrono's).
const ORDINAL_DAY = new RegExp(
  String.raw`\b(?:(sun|mon|tue|wed|thu|fri|sat)[a-z]{0,6},?[ ]+)?(?:on[ ]+)?the[ ]+(\d{1,2})(?:st|nd|rd|th)\b(?![ ]+(?:of[ ]+)?(?:${MONTH_WORDS}))`,
  'i',
);

/**
 * A day of the month without its month: the next such day from the reference day on; with
 * a weekday, the next one that falls on it ("Friday the 13th"), else the next of the day.
 */
class OrdinalDayParser implements chrono.Parser {
  pattern(): RegExp {
    return ORDINAL_DAY;
  }

  extract(context: chrono.ParsingContext, match: RegExpMatchArray): Components | null {
    const dayOfMonth = Number(match[2]);
    if (dayOfMonth < 1 || dayOfMonth > 31) return null;
    const weekday = match[1] ? WEEKDAY_NUMBERS[match[1].toLowerCase()] : undefined;
    const today = referenceDay(context);
    let first: { year: number; month: number; day: number } | null = null;
    // Friday the 13th comes at least once in 14 months; a day comes every month but February.
    for (let i = 0; i < 28; i++) {
      const month = ((today.month - 1 + i) % 12) + 1;
      const year = today.year + Math.floor((today.month - 1 + i) / 12);
      const d = new Date(Date.UTC(year, month - 1, dayOfMonth));
      if (d.getUTCMonth() !== month - 1 || (i === 0 && dayOfMonth < today.day)) continue;
      const day = { year, month, day: dayOfMonth };
      first ??= day;
      if (weekday === undefined || d.getUTCDay() === weekday) return dateComponents(context, day);
    }
    return first ? dateComponents(context, first) : null;
  }
}

// "3/30-4/3", "12/28/2026 - 1/2/2027" (month first: day-first texts are swapped before chrono).
const NUMERIC_RANGE = /(?<![\d/])(\d{1,2})\/(\d{1,2})(?:\/(\d{4}|\d{2}))?[ ]?-[ ]?(\d{1,2})\/(\d{1,2})(?:\/(\d{4}|\d{2}))?(?![\d/])/;

const fullYear = (y: string) => (y.length === 2 ? 2000 + Number(y) : Number(y));
const validDay = (year: number, month: number, day: number) => {
  const d = new Date(Date.UTC(year, month - 1, day));
  return month >= 1 && month <= 12 && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
};

class NumericDateRangeParser implements chrono.Parser {
  pattern(): RegExp {
    return NUMERIC_RANGE;
  }

  extract(context: chrono.ParsingContext, match: RegExpMatchArray): chrono.ParsingResult | null {
    const today = referenceDay(context);
    const [startMonth, startDay, endMonth, endDay] = [match[1], match[2], match[4], match[5]].map(Number);
    const givenYear = match[3] ?? match[6];
    let startYear = match[3] ? fullYear(match[3]) : givenYear ? fullYear(givenYear) : today.year;
    let endYear = match[6] ? fullYear(match[6]) : startYear + (endMonth < startMonth ? 1 : 0);
    if (!givenYear) {
      // A range already over this year is next year's.
      const endKey = (endYear - today.year) * 10_000 + endMonth * 100 + endDay;
      if (endKey < today.month * 100 + today.day) {
        startYear += 1;
        endYear += 1;
      }
    }
    if (!validDay(startYear, startMonth, startDay) || !validDay(endYear, endMonth, endDay)) return null;
    const start = dateComponents(context, { year: startYear, month: startMonth, day: startDay }, !!givenYear);
    const end = dateComponents(context, { year: endYear, month: endMonth, day: endDay }, !!givenYear);
    return context.createParsingResult(match.index ?? 0, match[0], start, end);
  }
}

const CLOCK_WORDS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12 };
// "half past six", "a quarter to 8", "quarter after three pm".
const SPOKEN_TIME = /\b(half|(?:a[ ]+)?quarter)[ ]+(past|after|to|till|before)[ ]+(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b(?:[ ]?([ap]m)\b)?/i;

class SpokenTimeParser implements chrono.Parser {
  pattern(): RegExp {
    return SPOKEN_TIME;
  }

  extract(context: chrono.ParsingContext, match: RegExpMatchArray): Components | null {
    const word = match[3].toLowerCase();
    let hour = CLOCK_WORDS[word] ?? Number(word);
    if (hour < 1 || hour > 12) return null;
    const minutes = match[1].toLowerCase() === 'half' ? 30 : 15;
    const before = /^(?:to|till|before)$/i.test(match[2]);
    if (before && minutes === 30) return null; // "half to six" is not said
    const minute = before ? 60 - minutes : minutes;
    if (before) hour = hour === 1 ? 12 : hour - 1;
    const c = context.createParsingComponents({ hour, minute });
    if (match[4]) {
      const pm = match[4].toLowerCase() === 'pm';
      c.assign('meridiem', pm ? 1 : 0);
      if (pm && hour < 12) c.assign('hour', hour + 12);
      if (!pm && hour === 12) c.assign('hour', 0);
    }
    return c;
  }
}

// "@ 8", "@7:30pm" in chat: a time, where "@ Sweetgreen" is a place.
const AT_SIGN_TIME = /@[ ]?(\d{1,2})(?::(\d{2}))?(?:[ ]?([ap]m)\b)?(?![\d:./])/i;

class AtSignTimeParser implements chrono.Parser {
  pattern(): RegExp {
    return AT_SIGN_TIME;
  }

  extract(context: chrono.ParsingContext, match: RegExpMatchArray): Components | null {
    let hour = Number(match[1]);
    const minute = match[2] ? Number(match[2]) : 0;
    if (hour > 23 || minute > 59 || (match[3] && (hour < 1 || hour > 12))) return null;
    const c = context.createParsingComponents({ hour, minute });
    if (match[3]) {
      const pm = match[3].toLowerCase() === 'pm';
      if (pm && hour < 12) hour += 12;
      if (!pm && hour === 12) hour = 0;
      c.assign('hour', hour);
      c.assign('meridiem', pm ? 1 : 0);
    }
    return c;
  }
}

// "Saturday 8-12", "Fri 3/13, 10-2": hours without am/pm, right after (or before) a day. Elsewhere
// "8-12" is as likely an age, a score or a count.
const BARE_HOUR_RANGE = /(?<![\d:/.-])(\d{1,2})(?::([0-5]\d))?[ ]?-[ ]?(\d{1,2})(?::([0-5]\d))?(?![\d:/.-]|[ ]?[ap]\.?m\b)/i;
const AFTER_A_DAY = /(?:day|\b(?:mon|tues?|wed|thu|thurs|fri|sat|sun)|\d)\.?,?[ ]+$/i;
// …or right before one: "Open gym 1-3 Sunday", "9-11 on Sat 3/14", "4-6 tomorrow".
const BEFORE_A_DAY = /^,?[ ]+(?:on[ ]+)?(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6}\b|(?:today|tonight|tomorrow|tmrw|this|next)\b|\d{1,2}\/\d{1,2}\b)/i;

class BareHourRangeParser implements chrono.Parser {
  pattern(): RegExp {
    return BARE_HOUR_RANGE;
  }

  extract(context: chrono.ParsingContext, match: RegExpMatchArray): chrono.ParsingResult | null {
    const index = match.index ?? 0;
    const after = context.text.slice(index + match[0].length, index + match[0].length + 20);
    if (!AFTER_A_DAY.test(context.text.slice(Math.max(0, index - 12), index)) && !BEFORE_A_DAY.test(after)) return null;
    const [startHour, endHour] = [Number(match[1]), Number(match[3])];
    if (startHour < 1 || startHour > 12 || endHour < 1 || endHour > 12 || startHour === endHour) return null;
    // An end before its start only across noon ("10-2", "11-1"); "3-1" is a score.
    if (endHour < startHour && !(startHour >= 7 && endHour <= 6)) return null;
    const start = context.createParsingComponents({ hour: startHour, minute: match[2] ? Number(match[2]) : 0 });
    const end = context.createParsingComponents({ hour: endHour, minute: match[4] ? Number(match[4]) : 0 });
    return context.createParsingResult(index, match[0], start, end);
  }
}

// "around 2", "approx. 10:30am", "~7" (a lead word), or "2ish", "4-ish" (a suffix).
const APPROXIMATE_TIME =
  /(?:\b(?:around|approx(?:imately|\.)?|roughly|circa)[ ]+|~[ ]?)(\d{1,2})(?::([0-5]\d))?(?:[ ]?([ap]m)\b)?(?:[ ]?-?ish\b)?|(?<![\d:.])\b(\d{1,2})(?::([0-5]\d))?(?:[ ]?([ap]m))?[ ]?-?ish\b/i;
// Words that may follow a rough time ("around 7 at the library"); another word makes it a
// count ("around 5 people", "~3 miles").
const AFTER_ROUGH_TIME = /^[ ]*(?:[a-z]+)?/i;
const ROUGH_TIME_FOLLOWERS = new Set(['', 'at', 'on', 'in', 'to', 'til', 'till', 'until', 'and', 'or', 'with', 'for', 'tonight', 'tonite', 'tomorrow', 'today', 'this', 'next', 'sharp', 'ish']);

/** A rough time is read as the time itself; an hour without am/pm is then read as chrono's bare hours are. */
class ApproximateTimeParser implements chrono.Parser {
  pattern(): RegExp {
    return APPROXIMATE_TIME;
  }

  extract(context: chrono.ParsingContext, match: RegExpMatchArray): Components | null {
    const [hourText, minuteText, meridiem] = match[1] !== undefined ? [match[1], match[2], match[3]] : [match[4], match[5], match[6]];
    let hour = Number(hourText);
    const minute = minuteText ? Number(minuteText) : 0;
    if (hour > 23 || (meridiem && (hour < 1 || hour > 12)) || (!meridiem && !minuteText && (hour < 1 || hour > 12))) return null;
    const after = AFTER_ROUGH_TIME.exec(context.text.slice((match.index ?? 0) + match[0].length, (match.index ?? 0) + match[0].length + 24));
    if (!ROUGH_TIME_FOLLOWERS.has((after?.[0] ?? '').trim().toLowerCase())) return null;
    const c = context.createParsingComponents({ hour, minute });
    if (meridiem) {
      const pm = meridiem.toLowerCase() === 'pm';
      if (pm && hour < 12) hour += 12;
      if (!pm && hour === 12) hour = 0;
      c.assign('hour', hour);
      c.assign('meridiem', pm ? 1 : 0);
    }
    return c;
  }
}

/** Tag on a result read from a holiday's name: the name may be the event's too ("Thanksgiving potluck"). */
export const HOLIDAY_TAG = 'extract/holiday';

type Day = { year: number; month: number; day: number };

/** The nth weekday (0 Sunday … 6 Saturday) of a month; n = -1: the last one. */
function nthWeekday(year: number, month: number, weekday: number, n: number): Day {
  if (n > 0) {
    const first = new Date(Date.UTC(year, month - 1, 1)).getUTCDay();
    return { year, month, day: 1 + ((weekday - first + 7) % 7) + 7 * (n - 1) };
  }
  const lastDay = new Date(Date.UTC(year, month, 0));
  return { year, month, day: lastDay.getUTCDate() - ((lastDay.getUTCDay() - weekday + 7) % 7) };
}

/** Easter Sunday (Gregorian computus). */
function easter(year: number): Day {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const h = (19 * a + b - Math.floor(b / 4) - Math.floor((8 * b + 13) / 25) + 15) % 30;
  const l = (32 + 2 * (b % 4) + 2 * Math.floor(c / 4) - h - (c % 4)) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  return { year, month, day: ((h + l - 7 * m + 114) % 31) + 1 };
}

const fixed = (month: number, day: number) => (year: number): Day => ({ year, month, day });
// The holidays of English-speaking calendars, US ones where they differ; each gives its day in a year.
const HOLIDAYS: Array<[RegExp, (year: number) => Day]> = [
  [/^new year'?s eve$/, fixed(12, 31)],
  [/^new year'?s(?: day)?$/, fixed(1, 1)],
  [/^christmas eve$/, fixed(12, 24)],
  [/^christmas(?: day)?$/, fixed(12, 25)],
  [/^boxing day$/, fixed(12, 26)],
  [/^valentine'?s day$/, fixed(2, 14)],
  [/^st\.? patrick'?s day$/, fixed(3, 17)],
  [/^(?:the )?fourth of july$|^independence day$/, fixed(7, 4)],
  [/^juneteenth$/, fixed(6, 19)],
  [/^halloween$/, fixed(10, 31)],
  [/^veterans'? day$/, fixed(11, 11)],
  [/^(?:mlk|martin luther king(?: jr\.?)?) day$/, (y) => nthWeekday(y, 1, 1, 3)],
  [/^presidents?'? day$|^president's day$/, (y) => nthWeekday(y, 2, 1, 3)],
  [/^mother'?s day$/, (y) => nthWeekday(y, 5, 0, 2)],
  [/^memorial day$/, (y) => nthWeekday(y, 5, 1, -1)],
  [/^father'?s day$/, (y) => nthWeekday(y, 6, 0, 3)],
  [/^labou?r day$/, (y) => nthWeekday(y, 9, 1, 1)],
  [/^(?:columbus|indigenous peoples'?) day$/, (y) => nthWeekday(y, 10, 1, 2)],
  [/^thanksgiving(?: day)?$/, (y) => nthWeekday(y, 11, 4, 4)],
  [/^easter(?: sunday)?$/, easter],
  [/^good friday$/, (y) => plusDays(easter(y), -2)],
];
const HOLIDAY =
  /\b((?:new[ ]year'?s|christmas)[ ]eve|new[ ]year'?s(?:[ ]day)?|christmas(?:[ ]day)?|boxing[ ]day|valentine'?s[ ]day|st\.?[ ]patrick'?s[ ]day|(?:the[ ])?fourth[ ]of[ ]july|independence[ ]day|juneteenth|halloween|veterans'?[ ]day|(?:mlk|martin[ ]luther[ ]king(?:[ ]jr\.?)?)[ ]day|presidents?'?[ ]day|president's[ ]day|mother'?s[ ]day|memorial[ ]day|father'?s[ ]day|labou?r[ ]day|(?:columbus|indigenous[ ]peoples'?)[ ]day|thanksgiving(?:[ ]day)?|easter(?:[ ]sunday)?|good[ ]friday)(?:[ ](weekend))?(?![\w'])/i;

/**
 * "Memorial Day", "Thanksgiving weekend", "Christmas Eve": the holiday's next day from the
 * reference day on (this year's, or next year's once it is past). A holiday's weekend is
 * the long one around it: Saturday to a Monday holiday, a Thursday or Friday one to Sunday.
 */
class HolidayParser implements chrono.Parser {
  pattern(): RegExp {
    return HOLIDAY;
  }

  extract(context: chrono.ParsingContext, match: RegExpMatchArray): chrono.ParsingResult | null {
    const name = match[1].toLowerCase().replace(/[ ]+/g, ' ');
    const dayOf = HOLIDAYS.find(([pattern]) => pattern.test(name))?.[1];
    if (!dayOf) return null;
    const today = referenceDay(context);
    const key = (d: Day) => d.year * 10_000 + d.month * 100 + d.day;
    let day = dayOf(today.year);
    if (key(day) < key(today)) day = dayOf(today.year + 1);
    let [first, last] = [day, day];
    if (match[2]) {
      const weekday = new Date(Date.UTC(day.year, day.month - 1, day.day)).getUTCDay();
      if (weekday === 1) first = plusDays(day, -2);
      else if (weekday === 4 || weekday === 5) last = plusDays(day, 7 - weekday);
      else if (weekday === 6) last = plusDays(day, 1);
      else if (weekday === 0) first = plusDays(day, -1);
    }
    const start = dateComponents(context, first);
    start.addTag(HOLIDAY_TAG);
    const end = first === last ? null : dateComponents(context, last);
    return context.createParsingResult(match.index ?? 0, match[0], start, end ?? undefined);
  }
}

// "tonite", "2nite": chrono knows "tonight" (and "tmrw", "tmr").
const TONITE = /\b(?:tonite|2nite)\b/i;

class ToniteParser implements chrono.Parser {
  pattern(): RegExp {
    return TONITE;
  }

  extract(context: chrono.ParsingContext): Components {
    const c = dateComponents(context, referenceDay(context), true);
    c.imply('hour', 22);
    c.imply('meridiem', 1);
    return c;
  }
}

const dayNumber = (c: Components) => Date.UTC(c.get('year') ?? 0, (c.get('month') ?? 1) - 1, c.get('day') ?? 1) / 86_400_000;
const minutesOf = (c: Components) => (c.get('hour') ?? 0) * 60 + (c.get('minute') ?? 0);

/**
 * A meridiem written once for a range: "11-1pm" and "10:30-12pm" start in the morning (chrono
 * gave the start the end's "pm" and so put it after the end), and so do "6-7am" and
 * "8:15-9:00am" (their start is marked as morning); "noon to 1", "9am-5", "from
 * 10 to 3" end in the afternoon, unless the end is past midnight ("9pm-1", "22:00-02:00").
 */
class RangeMeridiemRefiner implements chrono.Refiner {
  refine(_context: chrono.ParsingContext, results: chrono.ParsingResult[]): chrono.ParsingResult[] {
    for (const r of results) {
      const { start, end } = r;
      if (end && start.isCertain('hour') && end.isCertain('hour')) {
        const startMeridiem = start.isCertain('meridiem');
        const endMeridiem = end.isCertain('meridiem');
        let moved = false;
        if (endMeridiem && !startMeridiem && end.get('meridiem') === 1 && minutesOf(start) > minutesOf(end) && (start.get('hour') ?? 0) >= 12) {
          start.assign('hour', (start.get('hour') ?? 0) - 12);
          start.assign('meridiem', 0);
          moved = true;
        } else if (endMeridiem && !startMeridiem && end.get('meridiem') === 0 && (start.get('hour') ?? 0) < 12 && minutesOf(start) < minutesOf(end)) {
          // "6-7am", "8:15-9:00am": the morning holds for the start too (no later rule may move it).
          start.assign('meridiem', 0);
        } else if (!endMeridiem && (end.get('hour') ?? 0) < 12 && minutesOf(end) <= minutesOf(start) && minutesOf(end) + 720 > minutesOf(start)) {
          end.assign('hour', (end.get('hour') ?? 0) + 12);
          end.assign('meridiem', 1);
          moved = true;
        }
        // chrono had put an end before its start on the next day; it is the same day now.
        if (moved && dayNumber(end) === dayNumber(start) + 1) {
          for (const part of ['day', 'month', 'year'] as const) {
            if (end.isCertain(part)) end.assign(part, start.get(part) ?? 0);
            else end.imply(part, start.get(part) ?? 0);
          }
        }
      }
      // "Dec 31 9pm-midnight": chrono moves the end to January 1 of the same year.
      if (end && end.isCertain('day') && end.get('month') === 1 && start.get('month') === 12 && end.get('year') === start.get('year')) {
        end.assign('year', (start.get('year') ?? 0) + 1);
      }
    }
    return results;
  }
}

// "the weekend of March 21", "weekend of the 14th": before a date chrono has read.
const WEEKEND_OF = /(?:\bthe[ ]+)?\bweekend[ ]+of[ ]+$/i;

/** "the weekend of March 21": the Saturday and Sunday of the weekend that date falls in (or before). */
class WeekendOfRefiner implements chrono.Refiner {
  refine(context: chrono.ParsingContext, results: chrono.ParsingResult[]): chrono.ParsingResult[] {
    for (const r of results) {
      if (r.end || !r.start.isCertain('day') || r.start.isCertain('hour')) continue;
      const before = WEEKEND_OF.exec(context.text.slice(Math.max(0, r.index - 20), r.index));
      if (!before) continue;
      const day = { year: r.start.get('year') ?? 0, month: r.start.get('month') ?? 0, day: r.start.get('day') ?? 0 };
      const weekday = new Date(Date.UTC(day.year, day.month - 1, day.day)).getUTCDay();
      const saturday = plusDays(day, weekday === 0 ? -1 : 6 - weekday);
      const yearCertain = r.start.isCertain('year');
      r.start = dateComponents(context, saturday, yearCertain);
      r.end = dateComponents(context, plusDays(saturday, 1), yearCertain);
      r.index -= before[0].length;
      r.text = before[0] + r.text;
    }
    return results;
  }
}

// Between a weekday label and the dates it names: "Fri–Sun, March 20–22", "Sat & Sun, 3/21-3/22".
const LABEL_JOINER = /^[ ]*(?:-|to|through|thru|&|and)[ ]*$/i;

/**
 * "Fri–Sun, March 20–22": chrono reads "Fri" alone and "Sun, March 20–22" as the dates,
 * and the two would make a range from this Friday. The dates are what the text means; the
 * weekdays before them only label them.
 */
class WeekdayLabelRefiner implements chrono.Refiner {
  refine(context: chrono.ParsingContext, results: chrono.ParsingResult[]): chrono.ParsingResult[] {
    const out: chrono.ParsingResult[] = [];
    for (let i = 0; i < results.length; i++) {
      const [label, dates] = [results[i], results[i + 1]];
      const between = dates ? context.text.slice(label.index + label.text.length, dates.index) : '';
      if (dates && !label.end && label.start.isOnlyWeekdayComponent() && dates.start.isCertain('day') && dates.start.isCertain('month') && LABEL_JOINER.test(between)) {
        dates.text = label.text + between + dates.text;
        dates.index = label.index;
        continue;
      }
      out.push(label);
    }
    return out;
  }
}

// "March 19 and 20", "April 3rd & 4th": the second day of two in a row, without its month.
const AND_NEXT_DAY = /^[ ]*(?:and|&)[ ]*(\d{1,2})(?:st|nd|rd|th)?\b(?![ ]*(?:[:/.]\d|[ap]m\b|[ap]\.m|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))/i;

/**
 * "Conferences are March 19 and 20": two days in a row are a span of days (chrono read the
 * first and left "and 20" in the title). Days apart ("March 3 and 10") are two events: the
 * first is read, as before.
 */
class AndNextDayRefiner implements chrono.Refiner {
  refine(context: chrono.ParsingContext, results: chrono.ParsingResult[]): chrono.ParsingResult[] {
    for (const r of results) {
      if (r.end || !r.start.isCertain('day') || !r.start.isCertain('month') || r.start.isCertain('hour')) continue;
      const m = AND_NEXT_DAY.exec(context.text.slice(r.index + r.text.length, r.index + r.text.length + 16));
      if (!m || Number(m[1]) !== (r.start.get('day') ?? 0) + 1) continue;
      const end = r.start.clone();
      end.assign('day', Number(m[1]));
      if (!end.isValidDate()) continue;
      end.delete('weekday');
      r.end = end;
      r.text += m[0];
    }
    return results;
  }
}

// chrono's weekday reader takes "weekend" and "weekday" for one day: Saturday, Monday.
const WEEK_PART = /\bweek(?:end|day)$/i;

/**
 * Drops chrono's one-day readings of "weekend" and "weekday": "Weekend retreat March 20" is
 * a name (the date is March 20), and a weekend the text points at is WeekendParser's two days.
 */
class WeekPartRefiner implements chrono.Refiner {
  refine(_context: chrono.ParsingContext, results: chrono.ParsingResult[]): chrono.ParsingResult[] {
    return results.filter((r) => r.end || !WEEK_PART.test(r.text));
  }
}

export const extraParsers: chrono.Parser[] = [
  new WeekendParser(),
  new OrdinalDayParser(),
  new NumericDateRangeParser(),
  new SpokenTimeParser(),
  new AtSignTimeParser(),
  new ToniteParser(),
  new BareHourRangeParser(),
  new ApproximateTimeParser(),
  new HolidayParser(),
];
export const extraRefiners: chrono.Refiner[] = [new WeekPartRefiner(), new WeekdayLabelRefiner(), new WeekendOfRefiner(), new AndNextDayRefiner(), new RangeMeridiemRefiner()];
