import { DateTime } from 'luxon';
import { isValidTimeZone, zoneOffsetMinutes } from '../../../shared/calendar/time-zones';
import type { DatePhrase, Moment } from './date-phrases';
import type { Duration } from './durations';
import type { ZoneMention } from './explicit-zones';
import { firstOccurrence } from './occurrences';
import type { Recurrence } from './recurrence-phrases';

/**
 * When the event is: the phrase that says so (merged with its neighbour when the day and
 * the time were written apart), resolved in the right zone, with an end from a range, a
 * duration, or the defaults (one hour; all-day: the same day).
 */
export type Timing =
  | { isAllDay: false; startMs: number; endMs: number; zone: string }
  | { isAllDay: true; startDay: string; endDay: string; zone: string };

interface TimingInput {
  phrases: DatePhrase[];
  /** Phrases on a "When:"/"Date:" line, or else the one a change of date moves to ("moved to Monday"), which win over the others. */
  preferred: (p: DatePhrase) => boolean;
  text: string;
  zone: string;
  reference: Date;
  zones: ZoneMention[];
  duration: Duration | null;
  recurrence: Recurrence | null;
  allDayPhrase: boolean;
}

interface TimingResult {
  timing: Timing;
  /** The phrases read (marked as dates; cut from the title). */
  used: DatePhrase[];
}

const HOUR_MS = 3_600_000;

// What may stand between a day and its time written apart ("Sat Mar 7, 10am", "May 5 at 3").
const JOINER = /^[\s,;:@|·•-]*(?:(?:at|on|from|starting|beginning|between|@)[\s,;:|·•-]*)?$/i;
// …and between the two ends of a range written as two phrases.
const RANGE_JOINER = /^\s*(?:-|to|until|till|through|thru)\s*$/i;
// "Sat & Sun", "Monday and Tuesday": two days in a row are a span of days.
const AND_JOINER = /^\s*(?:&|and)\s*$/i;
const dayAfter = (a: Moment, b: Moment) => Date.UTC(b.year, b.month - 1, b.day) - Date.UTC(a.year, a.month - 1, a.day) === 86_400_000;

const dayOnly = (p: DatePhrase) => p.from.dateCertain && !p.from.timeCertain;
const timeOnly = (p: DatePhrase) => p.from.timeCertain && !p.from.dateCertain;

function withTimeOf(day: DatePhrase, time: DatePhrase): DatePhrase {
  const withTime = (m: Moment, t: Moment): Moment => ({ ...m, hour: t.hour, minute: t.minute, timeCertain: true, offset: t.offset ?? m.offset });
  const from = withTime(day.from, time.from);
  const to = time.to ? withTime(day.to ?? day.from, time.to) : null;
  return { start: Math.min(day.start, time.start), end: Math.max(day.end, time.end), from, to };
}

/**
 * A day-only phrase and a time-only phrase make one moment when they sit next to each
 * other ("Sat Mar 7, 10am"), or in the same line ("19:00 at Betahaus … on March 18"), unless
 * the day is a range of days (a multi-day event stays all-day).
 */
function mergeNeighbours(phrases: DatePhrase[], index: number, text: string): { phrase: DatePhrase; used: DatePhrase[] } {
  const first = phrases[index];
  const next = phrases[index + 1];
  if (next) {
    const gap = text.slice(first.end, next.start);
    const a = first.from;
    const b = next.from;
    if (JOINER.test(gap) && a.dateCertain !== b.dateCertain && a.timeCertain !== b.timeCertain) {
      const [day, time] = a.dateCertain ? [first, next] : [next, first];
      return { phrase: withTimeOf(day, time), used: [first, next] };
    }
    // "Mon 3/9 & Tue 3/10, 3:30-5:30pm": the time written once holds for the first day too.
    if (AND_JOINER.test(gap) && dayOnly(first) && !first.to && b.dateCertain && b.timeCertain) {
      return { phrase: withTimeOf(first, next), used: [first, next] };
    }
    const daysInARow = AND_JOINER.test(gap) && dayOnly(first) && dayOnly(next) && !next.to && dayAfter(a, b);
    if ((RANGE_JOINER.test(gap) || daysInARow) && !first.to && a.timeCertain === b.timeCertain) {
      return { phrase: { start: first.start, end: next.end, from: a, to: b }, used: [first, next] };
    }
  }
  const lineStart = text.lastIndexOf('\n', first.start) + 1;
  const lineEnd = text.indexOf('\n', first.end) === -1 ? text.length : text.indexOf('\n', first.end);
  const sameLine = phrases.filter((p) => p !== first && p.start >= lineStart && p.end <= lineEnd);
  if (timeOnly(first)) {
    const day = sameLine.find((p) => dayOnly(p) && !p.to);
    if (day) return { phrase: withTimeOf(day, first), used: [first, day] };
  } else if (dayOnly(first) && !first.to) {
    const time = sameLine.find(timeOnly);
    if (time) return { phrase: withTimeOf(first, time), used: [first, time] };
  }
  return { phrase: first, used: [first] };
}

// Between one moment's times for two zones: "9am PT / noon ET", "2pm EST (11am PST)".
const ALTERNATE_JOINER = /^[ ]*(?:\/|\||\(|or|=)[ ]*$/i;

const zoneRightAfter = (p: DatePhrase, zones: ZoneMention[]) => zones.find((z) => z.start >= p.start && z.start <= p.end + 3);

/**
 * "9am PT / noon ET", "6pm ET / 3pm PT, Thursday April 2": one moment written for two
 * zones, each time followed by its own. The two phrases become one: the first time in its
 * zone, on the day either of them names (chrono joins a day to the time next to it).
 * Returns the phrases with each such pair joined, and the joined ones.
 */
function joinAlternateZones(phrases: DatePhrase[], zones: ZoneMention[], text: string): { phrases: DatePhrase[]; joined: Set<DatePhrase> } {
  const joined = new Set<DatePhrase>();
  if (zones.length < 2) return { phrases, joined };
  const out: DatePhrase[] = [];
  for (let i = 0; i < phrases.length; i++) {
    const a = phrases[i];
    const b = phrases[i + 1];
    const za = zoneRightAfter(a, zones);
    const zb = b ? zoneRightAfter(b, zones) : undefined;
    const alternate =
      b && za && zb && za !== zb && a.from.timeCertain && b.from.timeCertain && za.end <= b.start && ALTERNATE_JOINER.test(text.slice(za.end, b.start));
    if (!alternate) {
      out.push(a);
      continue;
    }
    const day = a.from.dateCertain ? a.from : b.from.dateCertain ? b.from : a.from;
    const from: Moment = { ...a.from, year: day.year, month: day.month, day: day.day, dateCertain: day.dateCertain, yearCertain: day.yearCertain };
    const to = a.to && !a.to.dateCertain ? { ...a.to, year: day.year, month: day.month, day: day.day } : a.to;
    const one = { start: a.start, end: b.end, from, to };
    joined.add(one);
    out.push(one);
    i++;
  }
  return { phrases: out, joined };
}

/**
 * The zone a wall-clock time is read in: one written in or right after the phrase; else,
 * unless the phrase carries its own offset, one written elsewhere next to a time.
 */
function zoneFor(phrase: DatePhrase, zones: ZoneMention[], ownOffset: boolean): ZoneMention | null {
  const adjacent = zones.find((z) => z.start >= phrase.start && z.start <= phrase.end + 3);
  if (adjacent || ownOffset) return adjacent ?? null;
  return zones.find((z) => z.start >= phrase.start) ?? zones[0] ?? null;
}

const utcWallMs = (m: Moment) => Date.UTC(m.year, m.month - 1, m.day, m.hour, m.minute);

function resolve(m: Moment, zone: string, mention: ZoneMention | null): number {
  if (mention?.zone) return DateTime.fromObject({ year: m.year, month: m.month, day: m.day, hour: m.hour, minute: m.minute }, { zone: mention.zone }).toMillis();
  if (mention && mention.fixedOffsetMinutes !== null) return utcWallMs(m) - mention.fixedOffsetMinutes * 60_000;
  if (m.offset !== null) return utcWallMs(m) - m.offset * 60_000;
  return DateTime.fromObject({ year: m.year, month: m.month, day: m.day, hour: m.hour, minute: m.minute }, { zone }).toMillis();
}

/** The event's zone: the writer's, unless the text named another clock for that moment. */
function eventZone(requestZone: string, atMs: number, named: string | null, fixedOffset: number | null): string {
  if (named) return zoneOffsetMinutes(named, atMs) === zoneOffsetMinutes(requestZone, atMs) ? requestZone : named;
  if (fixedOffset === null || fixedOffset === zoneOffsetMinutes(requestZone, atMs)) return requestZone;
  if (fixedOffset === 0) return 'UTC';
  // Etc/GMT+5 is UTC-05:00 (POSIX signs); only whole hours have such a zone.
  const etc = fixedOffset % 60 === 0 ? `Etc/GMT${fixedOffset > 0 ? '-' : '+'}${Math.abs(fixedOffset / 60)}` : null;
  return etc && isValidTimeZone(etc) ? etc : requestZone;
}

const isoDay = (m: Pick<Moment, 'year' | 'month' | 'day'>) =>
  `${String(m.year).padStart(4, '0')}-${String(m.month).padStart(2, '0')}-${String(m.day).padStart(2, '0')}`;

const plusDays = (day: string, n: number) => DateTime.fromISO(day, { zone: 'UTC' }).plus({ days: n }).toISODate() as string;

export function readTiming(input: TimingInput): TimingResult | null {
  const { text, zone, reference } = input;
  const { phrases, joined } = joinAlternateZones(input.phrases, input.zones, text);
  if (!phrases.length && !input.recurrence) return null;
  let phrase: DatePhrase;
  let used: DatePhrase[] = [];
  if (phrases.length) {
    const preferredIndex = phrases.findIndex(input.preferred);
    const merged = mergeNeighbours(phrases, preferredIndex >= 0 ? preferredIndex : 0, text);
    phrase = merged.phrase;
    used = merged.used;
  } else {
    // "Standup every weekday": no date, but the repetition says which days.
    const w = DateTime.fromJSDate(reference, { zone });
    const from: Moment = { year: w.year, month: w.month, day: w.day, hour: 0, minute: 0, dateCertain: false, yearCertain: false, timeCertain: false, offset: null };
    phrase = { start: 0, end: 0, from, to: null };
  }

  let from = phrase.from;
  const isAllDay = input.allDayPhrase || !from.timeCertain;
  const mention = zoneFor(phrase, input.zones, from.offset !== null);
  if (input.recurrence && !from.dateCertain) {
    // "Tuesdays 4pm PT": the first Tuesday whose 4pm, Pacific time, is still ahead.
    const day = firstOccurrence(input.recurrence, from, mention?.zone ?? zone, reference, isAllDay);
    if (day) from = { ...from, ...day };
  } else if (input.recurrence && !(phrase.to?.dateCertain && isoDay(phrase.to) !== isoDay(from))) {
    // "Saturdays 8-9am starting March 12": the first Saturday from that day on (a start
    // that is not one of the rule's days would be an extra occurrence of its own).
    const dayStart = DateTime.fromObject({ year: from.year, month: from.month, day: from.day }, { zone }).toJSDate();
    const day = firstOccurrence(input.recurrence, from, zone, dayStart, true);
    if (day) {
      const to = phrase.to ? { ...phrase.to, ...day } : null;
      from = { ...from, ...day };
      phrase = { ...phrase, to };
    }
  }

  if (isAllDay) return { timing: allDay(from, phrase.to, input), used };

  const startMs = resolve(from, zone, mention);
  let endMs: number;
  if (phrase.to) {
    let to = phrase.to.dateCertain || phrase.to.timeCertain ? phrase.to : null;
    if (to && !to.dateCertain) to = { ...to, year: from.year, month: from.month, day: from.day };
    endMs = to ? resolve(to, zone, mention) : startMs + HOUR_MS;
    if (to && endMs <= startMs) endMs = rollForward(to, zone, mention, startMs);
  } else if (input.duration) {
    endMs = startMs + input.duration.minutes * 60_000;
  } else {
    endMs = startMs + HOUR_MS;
  }
  const named = mention?.zone ?? null;
  const fixed = mention ? mention.fixedOffsetMinutes : from.offset;
  // A moment given for two zones is for readers in both: the writer's zone is the event's.
  const eventIn = used.some((p) => joined.has(p)) ? zone : eventZone(zone, startMs, named, fixed);
  return { timing: { isAllDay: false, startMs, endMs, zone: eventIn }, used };
}

/** An end before its start was written without the day or year that makes it later. */
function rollForward(to: Moment, zone: string, mention: ZoneMention | null, startMs: number): number {
  for (const step of to.dateCertain ? (to.yearCertain ? [] : [{ years: 1 }]) : [{ days: 1 }]) {
    const moved = DateTime.fromObject({ year: to.year, month: to.month, day: to.day }, { zone: 'UTC' }).plus(step);
    const ms = resolve({ ...to, year: moved.year, month: moved.month, day: moved.day }, zone, mention);
    if (ms > startMs) return ms;
  }
  return startMs + HOUR_MS;
}

function allDay(from: Moment, to: Moment | null, input: TimingInput): Timing {
  const startDay = isoDay(from);
  let endDay = startDay;
  if (to && to.dateCertain) {
    endDay = isoDay(to);
    if (endDay < startDay && !to.yearCertain) endDay = isoDay({ ...to, year: to.year + 1 });
    if (endDay < startDay) endDay = startDay;
  } else if (input.duration?.days) {
    endDay = plusDays(startDay, input.duration.days - 1);
  }
  return { isAllDay: true, startDay, endDay, zone: input.zone };
}
