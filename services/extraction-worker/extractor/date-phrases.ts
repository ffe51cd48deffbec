import * as chrono from 'chrono-node';
import { DateTime } from 'luxon';
import { zoneOffsetMinutes } from '../../../shared/calendar/time-zones';
import { HOLIDAY_TAG } from './chrono-extensions';
import { chronoReader } from './chrono-reader';
import { writesDayFirst } from './day-first';
import { startsWithHouseNumber } from './locations';
import type { TextScan } from './text-scan';

/**
 * The date and time phrases of the text, read by chrono-node. chrono computes relative
 * days ("tomorrow", "next Tuesday") from the reference instant at one fixed offset; that is
 * right for the day, and the wall-clock fields it returns are resolved later in the real
 * IANA zone for the actual date (see timing.ts), so a date across a DST change keeps its
 * clock time.
 */

/** Wall-clock fields of one end of a phrase, with what the text actually said. */
export interface Moment {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  /** The text names the day (a date, a weekday, "tomorrow"), not just a time. */
  dateCertain: boolean;
  yearCertain: boolean;
  /** The text names a time of day. */
  timeCertain: boolean;
  /** A fixed offset the phrase carries ("…T15:00:00Z", "+02:00", "in 2 hours"), in minutes. */
  offset: number | null;
}

export interface DatePhrase {
  start: number;
  end: number;
  from: Moment;
  to: Moment | null;
  /** Read from a holiday's name ("Thanksgiving"), which may name the event as well. */
  holiday?: boolean;
}

/** At most this many phrases are kept: a hostile text full of times stays cheap. */
const MAX_PHRASES = 40;

function momentOf(c: chrono.ParsedComponents): Moment {
  const get = (name: chrono.Component) => c.get(name) ?? 0;
  return {
    year: get('year'),
    month: get('month'),
    day: get('day'),
    hour: get('hour'),
    minute: get('minute'),
    dateCertain: c.isCertain('day') || c.isCertain('weekday') || c.isCertain('month'),
    yearCertain: c.isCertain('year'),
    timeCertain: c.isCertain('hour'),
    offset: c.isCertain('timezoneOffset') ? c.get('timezoneOffset') : null,
  };
}

/**
 * chrono reads numeric dates month first. Where people write the day first, "12/05" is
 * swapped to "05/12" (same length, so positions hold); "12.05.2026" is day first anywhere.
 * chrono's own en-GB mode is not used: it also reads "March 12" as March 2012.
 */
function numericDatesMonthFirst(text: string, dayFirst: boolean): string {
  const swap = (all: string, a: string, b: string, sep: string, rest: string) => {
    const [day, month] = [Number(a), Number(b)];
    return day >= 1 && day <= 31 && month >= 1 && month <= 12 ? `${b}${sep}${a}${rest}` : all;
  };
  // Slashes first: the dotted dates rewritten below are month first already. After a dash
  // only when a slash date ends before it: the second half of "13/4-17/4".
  let out = dayFirst
    ? text.replace(/(?<![\d/.])(?<!(?<!\/\d{1,2})-)(\d{1,2})\/(\d{1,2})((?:\/\d{2,4})?)(?![\d/])/g, (all, d: string, m: string, rest: string) => swap(all, d, m, '/', rest))
    : text;
  out = out.replace(/(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})(?![\d.])/g, (all, d: string, m: string, y: string) => {
    const swapped = swap(all, d, m, '/', '');
    return swapped === all ? all : `${swapped}/${y}`;
  });
  // "14.03." (German and others: the day, the month, a dot each), not "at 10.05."
  if (dayFirst) out = out.replace(/(?<![\d.]|\bat[ ]|\bum[ ])(\d{1,2})\.(\d{1,2})\.(?![\d])/g, (all, d: string, m: string) => {
    const swapped = swap(all, d, m, '/', '');
    return swapped === all ? all : `${swapped} `;
  });
  return out;
}

// "Game night on Friday at 8pm", "Parents evening Monday 6pm": the day part belongs to the
// name (chrono would read "night on Friday" and lose the Friday). Not after a day word:
// "Friday evening", "tomorrow night" are dates.
const DAY_PART_IN_NAME =
  /\b([A-Za-z']+)[ ]+(morning|afternoon|evening|night)\b(?=[ ,-]+(?:on|at|from|this|next|tomorrow|today|tonight|tonite|\d|(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b))/gi;
const DAY_WORDS = /^(?:this|tomorrow|today|tonight|yesterday|the|every|each|on|in|of|next|last|late|early|mid|(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|satur|sun)(?:day)?s?)$/i;

export function markDayPartNames(scan: TextScan): void {
  for (const m of scan.text.matchAll(DAY_PART_IN_NAME)) {
    if (DAY_WORDS.test(m[1])) continue;
    const start = m.index + m[0].length - m[2].length;
    if (!scan.overlaps(start, start + m[2].length)) scan.mark('name', start, start + m[2].length);
  }
}

// What people do in the evening: "dinner at 8", "holiday party at 7" are not in the morning.
const EVENING_WORDS = /\b(?:dinner|supper|drinks|cocktails|happy[ ]hour|party|concert|gig|movie|gala|prom|evening|night|tonight|tonite|karaoke|pub)\b/i;
const MORNING_WORDS = /\b(?:breakfast|brunch|morning|sunrise)\b/i;
// What is done early in the day: "breakfast shift at 5:30", "sunrise yoga at 6" (not brunch,
// which is at 1 in the afternoon too, nor a greeting's "Good morning").
const EARLY_WORDS = /(?<!\bgood[ ])\b(?:breakfast|sunrise|dawn|morning)\b/i;

type DayPart = 'evening' | 'early' | 'day';

/** What part of the day the text is about, when its words say so; words of both say nothing. */
function dayPartOf(text: string): DayPart {
  const evening = EVENING_WORDS.test(text);
  if (evening && !MORNING_WORDS.test(text)) return 'evening';
  return !evening && EARLY_WORDS.test(text) ? 'early' : 'day';
}

/**
 * "at 3", "from 2 to 4", "drinks at 5:30": an hour from 1 to 6 without am/pm is meant in the
 * afternoon (chrono takes the morning); so is one from 7 to 10 in a text about the evening
 * ("dinner at 8"), while in a text about the early morning ("breakfast shift at 5:30",
 * "sunrise hike at 6") one from 4 to 6 stays in the morning. "06:00", written the 24-hour
 * way, stays as it is. A time-only phrase then falls on today if that time is still ahead,
 * else tomorrow.
 */
function afternoonForBareHours(r: chrono.ParsedResult, from: Moment, to: Moment | null, zone: string, reference: Date, dayPart: DayPart): void {
  const latest = dayPart === 'evening' ? 10 : dayPart === 'early' ? 3 : 6;
  const bare = (c: chrono.ParsedComponents, m: Moment) => m.timeCertain && !c.isCertain('meridiem') && m.offset === null && m.hour >= 1 && m.hour <= latest;
  if (!bare(r.start, from) || /(?:^|\D)0\d[:.]\d\d/.test(r.text)) return;
  from.hour += 12;
  if (to && r.end && to.timeCertain && !r.end.isCertain('meridiem') && to.hour < 12 && to.hour + 12 >= from.hour) to.hour += 12;
  if (from.dateCertain) return;
  const now = DateTime.fromJSDate(reference, { zone });
  const day = from.hour * 60 + from.minute > now.hour * 60 + now.minute ? now : now.plus({ days: 1 });
  for (const m of to && !to.dateCertain ? [from, to] : [from]) Object.assign(m, { year: day.year, month: day.month, day: day.day });
}

// "noon", "12 noon", "midday", "midnight" as the clock times chrono reads in ranges too
// ("10:30-noon", "noon to 1", "9pm-midnight"); each spelling as long as its word.
const CLOCK_WORDS = /\b(12[ ]?)?(noon|midday|midnight)\b/gi;

function clockWordsAsTimes(text: string): string {
  // Every spelling is at least as long as its time: "noon" and "12pm" are the shortest.
  return text.replace(CLOCK_WORDS, (all, _twelve: string | undefined, word: string) => (word.toLowerCase() === 'midnight' ? '12:00am' : '12pm').padEnd(all.length, ' '));
}

// "Thu 3/12 - 2-3pm", "March 12 — 2pm": a spaced dash between a day and its time separates
// them (chrono read "12 - 2" as a range of hours, or of days, and "-3" as a zone offset).
const MONTH_NAME = String.raw`(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b`;
const DASH_BEFORE_TIME = new RegExp(
  String.raw`(\b\d{1,2}\/\d{1,2}(?:\/\d{2,4})?|\b${MONTH_NAME}\.?[ ]\d{1,2}(?:st|nd|rd|th)?|\b\d{1,2}(?:st|nd|rd|th)?[ ]${MONTH_NAME})([ ]+)-(?=[ ]+\d{1,2}(?::\d{2}[ ]?|[ ]?)(?:[ap]m\b|-[ ]?\d{1,2}(?::\d{2})?[ ]?[ap]m\b)|[ ]+\d{1,2}:\d{2})`,
  'gi',
);
// "at the Y", "the Q": chrono reads a letter after "the" as a unit of time ("the Y": a year on).
const LETTER_AS_UNIT = /\b(the|an?|this|next|last)([ ]+)[A-Z]\b(?![.'’&])/g;

/** Same-length rewrites of the text chrono reads (see the patterns above). */
function forChrono(text: string): string {
  return clockWordsAsTimes(text)
    .replace(DASH_BEFORE_TIME, (_all, date: string, spaces: string) => `${date}${spaces},`)
    .replace(LETTER_AS_UNIT, (_all, word: string, spaces: string) => `${word}${spaces} `);
}

/** Every date phrase in the text not already marked as something else, in text order. */
export function findDatePhrases(scan: TextScan, zone: string, reference: Date): DatePhrase[] {
  const text = forChrono(numericDatesMonthFirst(scan.blanked(), writesDayFirst(zone)));
  const results = chronoReader.parse(text, { instant: reference, timezone: zoneOffsetMinutes(zone, reference.getTime()) }, { forwardDate: true });
  const phrases: DatePhrase[] = [];
  const dayPart = dayPartOf(scan.text);
  for (const r of results) {
    if (phrases.length >= MAX_PHRASES) break;
    // chrono reads a lone number ("Room 12", "2026") as a date now and then; a phrase must
    // name a day or a time to count.
    const from = momentOf(r.start);
    if (!from.dateCertain && !from.timeCertain && from.offset === null) continue;
    if (/^\d{1,4}$/.test(r.text.trim())) continue;
    // "at 22 Oak Street": a house number, not 10pm.
    if (!from.dateCertain && startsWithHouseNumber(text.slice(r.index, r.index + 60))) continue;
    const to = r.end ? momentOf(r.end) : null;
    afternoonForBareHours(r, from, to, zone, reference, dayPart);
    // A phrase ends where its word does ("Tues" was read as "Tue").
    let end = r.index + r.text.length;
    while (end < scan.text.length && /[A-Za-z]/.test(scan.original[end]) && /[A-Za-z]/.test(scan.original[end - 1])) end++;
    // …and where its "a.m." does (read as "am", the dots moved after it).
    const dotted = /^[ap]\.m\.?/i.exec(scan.original.slice(end - 2, end + 2));
    if (dotted && /[ap]m$/i.test(r.text)) end += dotted[0].length - 2;
    phrases.push({ start: r.index, end, from, to, ...(r.tags().has(HOLIDAY_TAG) ? { holiday: true } : {}) });
  }
  return phrases.sort((a, b) => a.start - b.start);
}
