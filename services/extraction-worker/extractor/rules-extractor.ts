import { DateTime } from 'luxon';
import { formatWithOffset } from '../../../shared/calendar/dates';
import { checkRrule } from '../../../shared/calendar/recurrence';
import { type DatePhrase, findDatePhrases, markDayPartNames } from './date-phrases';
import { findDuration } from './durations';
import { findZoneMentions } from './explicit-zones';
import { type ExtractionInput, ExtractionFailure, type ExtractionResult, type Extractor, UnsupportedLanguage } from './extractor';
import { findHeaders, type HeaderLine, markSenderLines } from './headers';
import { detectLanguage } from './language';
import { findLocation, markUrls } from './locations';
import { findRecurrence, type Recurrence, toRrule } from './recurrence-phrases';
import { type Line, linesOf, TextScan } from './text-scan';
import { readTiming, type Timing } from './timing';
import { sentencesOf, titleFromHeader, titleFromSentence } from './titles';

/**
 * The rule-based extractor: no network, no model, the same answer for the same input. It
 * reads English; a text in another language fails as `unsupported_language` (language.ts).
 * Phrases are understood in an order where each rule sees only what the earlier ones left:
 * sender lines, links, zones, repetition (and a month it runs until), durations, "all day",
 * then dates (chrono), then the place and, from what remains, the title.
 */
export class RulesExtractor implements Extractor {
  readonly name = 'rules';

  async extract(input: ExtractionInput): Promise<ExtractionResult> {
    return extractWithRules(input);
  }
}

const ALL_DAY = /\(?\ball[- ]day(?:[- ]long)?\b\)?/gi;
// An open end says nothing chrono can read, and is no part of the title.
const OPEN_END = /\b(?:(?:till|until|to)[ ]late|onwards?|and[ ]beyond)\b/gi;
// Meeting-link boilerplate is not what the event is called.
const BOILERPLATE = /^\s*(?:join\s+(?:(?:zoom|microsoft\s+teams|teams|google\s+meet|webex)\s*)?meeting|click\s+here\s+to\s+join|meeting\s+id|passcode|password|dial[- ]in|join\s+by\s+phone|microsoft\s+teams\s+meeting\s*$)\b/i;
const UNTIL_LEAD = /\b(?:until|till|through|thru|ending(?:[ ]on)?|ends(?:[ ]on)?)[ ]*$/i;
const GREETING = /^\s*(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|greetings)\b[^\n]{0,40}$/i;
const MAX_DESCRIPTION = 5000;
// What follows a holiday that names the event: a word that leads into nothing else.
const HOLIDAY_NAMES_EVENT = /^[ ]+(?!(?:at|on|in|from|for|to|and|or|until|till|through|thru|with|by|is|are|will|starting|this|next|weekend)\b)\p{L}/iu;
// Between two phrases read as one moment or range.
const USED_JOINER = /^[\s,;:@|·•-]*(?:(?:to|until|till|through|thru|and|&|at|on|from)[\s,;:@|·•-]*)?$/i;
// "Tomorrow's meeting has been moved to Monday at 9", "Thursday's game is pushed back to
// Friday": the date after the verb is the event's; the one before names the old date.
const MOVED_TO = /\b(?:moved|rescheduled|postponed|pushed(?:[ ]back)?|changed|shifted|delayed|bumped|switched)[ ]+(?:to|until|till)[ ]+(?:(?:the|on)[ ]+)?$/i;

function markAllDay(scan: TextScan): boolean {
  for (const m of scan.text.matchAll(OPEN_END)) scan.mark('date', m.index, m.index + m[0].length);
  let found = false;
  for (const m of scan.text.matchAll(ALL_DAY)) {
    if (scan.overlaps(m.index, m.index + m[0].length)) continue;
    scan.mark('all-day', m.index, m.index + m[0].length);
    found = true;
  }
  return found;
}

/** The repetition's last day; without a day ("until March"), its last month, through its end. */
interface Until {
  /** Null when the text gave none: the first such month from the event's start. */
  year: number | null;
  month: number;
  day: number | null;
}

const MONTH = String.raw`(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)`;
// "until March 2027", "through the end of June", "till May": a month, not followed by a day.
const UNTIL_MONTH = new RegExp(
  String.raw`\b(?:until|till|through|thru)[ ]+(?:(?:the[ ]+)?end[ ]+of[ ]+)?${MONTH}\b(?:,?[ ]+(?:of[ ]+)?(\d{4}))?(?![ ]*(?:[,/-][ ]*)?(?:the[ ]+)?\d)`,
  'gi',
);
const MONTH_PREFIXES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * "every Monday at 6pm until March 2027": read before chrono, which takes "6pm until March
 * 2027" for a range from March back to 6pm and "until May" for no date at all.
 */
function takeUntilMonth(scan: TextScan): Until | null {
  for (const m of scan.text.matchAll(UNTIL_MONTH)) {
    if (scan.overlaps(m.index, m.index + m[0].length)) continue;
    scan.mark('recurrence', m.index, m.index + m[0].length);
    return { year: m[2] ? Number(m[2]) : null, month: MONTH_PREFIXES.indexOf(m[1].slice(0, 3).toLowerCase()) + 1, day: null };
  }
  return null;
}

/** "every Tuesday until June 30": the phrase after "until" ends the repetition, not the event. */
function takeUntil(scan: TextScan, phrases: DatePhrase[]): DatePhrase | null {
  // chrono reads "at 4pm until December 15" as one range: its end is the repetition's.
  const ranged = phrases.findIndex((p) => p.to?.dateCertain && /\b(?:until|till|through|thru)\b/i.test(scan.text.slice(p.start, p.end)));
  if (ranged >= 0) {
    const p = phrases[ranged];
    phrases[ranged] = { ...p, to: null };
    return { start: p.start, end: p.end, from: p.to as DatePhrase['from'], to: null };
  }
  const index = phrases.findIndex((p) => UNTIL_LEAD.test(scan.text.slice(Math.max(0, p.start - 16), p.start)));
  if (index < 0) return null;
  const [until] = phrases.splice(index, 1);
  const lead = UNTIL_LEAD.exec(scan.text.slice(Math.max(0, until.start - 16), until.start));
  scan.mark('recurrence', until.start - (lead ? lead[0].length : 0), until.end);
  return until;
}

const untilOf = (p: DatePhrase | null): Until | null => (p ? { year: p.from.year, month: p.from.month, day: p.from.day } : null);

/** The event's first day (its midnight) in its zone. */
const firstDay = (timing: Timing): DateTime =>
  (timing.isAllDay ? DateTime.fromISO(timing.startDay, { zone: timing.zone }) : DateTime.fromMillis(timing.startMs, { zone: timing.zone })).startOf('day');

/** "for 2 months" from the first day: the day before the same date two months on. */
function lastingUntil(r: Recurrence, timing: Timing): Until | null {
  if (!r.lasts) return null;
  const last = firstDay(timing).plus(r.lasts).minus({ days: 1 });
  return { year: last.year, month: last.month, day: last.day };
}

function lastDay(until: Until, timing: Timing): DateTime {
  const { zone } = timing;
  if (until.day !== null) return DateTime.fromObject({ year: until.year ?? undefined, month: until.month, day: until.day }, { zone });
  const start = firstDay(timing);
  const monthEnd = (year: number) => DateTime.fromObject({ year, month: until.month, day: 1 }, { zone }).endOf('month').startOf('day');
  if (until.year !== null) return monthEnd(until.year);
  return monthEnd(start.year) < start ? monthEnd(start.year + 1) : monthEnd(start.year);
}

function untilValue(until: Until | null, timing: Timing): string | null {
  if (!until) return null;
  const day = lastDay(until, timing);
  // RFC 5545: UNTIL is a date for all-day events, else a UTC date-time (here: the day's end).
  return timing.isAllDay ? day.toFormat('yyyyLLdd') : day.endOf('day').toUTC().toFormat("yyyyLLdd'T'HHmmss'Z'");
}

const lineAt = (lines: Line[], index: number) => lines.find((l) => index >= l.start && index <= l.end);

/** The first line that reads like prose about the event (not a header, greeting or bare date). */
function titleLine(scan: TextScan, lines: Line[], headers: HeaderLine[]): Line | undefined {
  return lines.find((line) => {
    if (!line.text.trim() || GREETING.test(line.text) || BOILERPLATE.test(line.text) || headers.some((h) => h.start === line.start)) return false;
    for (let i = line.start; i < line.end; i++) if (!scan.isMarked(i) && /\p{L}/u.test(scan.text[i])) return true;
    return false;
  });
}

function describe(scan: TextScan, lines: Line[], headers: HeaderLine[], used: Line | undefined, usedSentence: Line | undefined): string | null {
  const skip = new Set(headers.map((h) => h.start));
  const body = lines
    .filter((l) => !skip.has(l.start) && l !== used)
    .map((l) => scan.original.slice(l.start, l.end).trimEnd())
    .join('\n');
  const rest = used && usedSentence ? scan.original.slice(usedSentence.end, used.end).trim() : '';
  const text = [rest, body.trim()].filter(Boolean).join('\n').trim();
  return text ? text.slice(0, MAX_DESCRIPTION) : null;
}

export function extractWithRules(input: ExtractionInput): ExtractionResult {
  const scan = new TextScan(input.text);
  const headers = findHeaders(scan.text);
  markSenderLines(scan, headers);
  const urls = markUrls(scan);
  // The sender's lines and links say nothing of the language the event is written in.
  if (detectLanguage(scan.blanked()) !== 'en') throw new UnsupportedLanguage();
  const zones = findZoneMentions(scan);
  const recurrence = findRecurrence(scan);
  const untilMonth = recurrence ? takeUntilMonth(scan) : null;
  const duration = findDuration(scan);
  const allDayPhrase = markAllDay(scan);
  markDayPartNames(scan);
  const found = findDatePhrases(scan, input.timezone, input.referenceDate);
  // "Christmas party Friday at 7", "New Year's Eve party Dec 31": a holiday beside a date
  // names the event; alone ("No school on Presidents' Day") it is the date. A holiday
  // right before a noun ("Thanksgiving potluck at 2pm") stays in the title either way.
  const dated = found.some((p) => !p.holiday && p.from.dateCertain);
  for (const p of found) if (p.holiday && (dated || HOLIDAY_NAMES_EVENT.test(scan.text.slice(p.end, p.end + 24)))) scan.mark('name', p.start, p.end);
  const phrases = dated ? found.filter((p) => !p.holiday) : found;
  const until = recurrence ? (untilMonth ?? untilOf(takeUntil(scan, phrases))) : null;

  const whenLines = headers.filter((h) => h.role === 'when');
  const inWhenLine = (p: DatePhrase) => whenLines.some((h) => p.start >= h.start && p.start <= h.end);
  const read = readTiming({
    phrases,
    preferred: phrases.some(inWhenLine) ? inWhenLine : (p) => MOVED_TO.test(scan.text.slice(Math.max(0, p.start - 40), p.start)),
    text: scan.text,
    zone: input.timezone,
    reference: input.referenceDate,
    zones,
    duration,
    recurrence,
    allDayPhrase,
  });
  if (!read) throw new ExtractionFailure('No date or time found in the text.');
  // Every date phrase is cut from the title, the ones not used too ("Reminder from Monday: …").
  for (const p of phrases) scan.mark('date', p.start, p.end);
  // …and the words that joined the phrases read as one ("Thursday thru Saturday", "Sat 3/14, 10am").
  const used = [...read.used].sort((a, b) => a.start - b.start);
  for (let i = 1; i < used.length; i++) {
    if (USED_JOINER.test(scan.text.slice(used[i - 1].end, used[i].start))) scan.mark('date', used[i - 1].end, used[i].start);
  }

  const lines = linesOf(scan.text);
  const first = titleLine(scan, lines, headers);
  const dateLine = read.used.length ? lineAt(lines, read.used[0].start) : undefined;
  const placeLines = [first, dateLine].filter((l, i, all): l is Line => !!l && all.indexOf(l) === i);
  const place = findLocation({ scan, headers, lines: placeLines, urls });

  const subject = headers.find((h) => h.role === 'title' && h.value);
  let title = subject ? titleFromHeader(subject, scan) : null;
  let titleSentence: Line | undefined;
  if (!title && first) {
    for (const sentence of sentencesOf(scan, first)) {
      title = titleFromSentence(scan, sentence);
      titleSentence = sentence;
      if (title) break;
    }
  }

  const rule = recurrence ? checkRrule(toRrule(recurrence, untilValue(until ?? lastingUntil(recurrence, read.timing), read.timing))) : null;
  return {
    title,
    description: describe(scan, lines, headers, subject ? undefined : first, titleSentence),
    location: place?.value ?? null,
    ...times(read.timing),
    recurrence_rule: rule?.ok ? rule.rule : null,
  };
}

function times(t: Timing): Pick<ExtractionResult, 'date_start' | 'date_end' | 'timezone' | 'is_all_day'> {
  if (t.isAllDay) return { date_start: t.startDay, date_end: t.endDay, timezone: t.zone, is_all_day: true };
  return { date_start: formatWithOffset(t.startMs, t.zone), date_end: formatWithOffset(t.endMs, t.zone), timezone: t.zone, is_all_day: false };
}
