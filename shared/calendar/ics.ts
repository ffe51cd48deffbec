import { createHash } from 'node:crypto';
import ical, { ICalAlarmType, type ICalAttendeeData, ICalAttendeeStatus, ICalEventStatus, ICalEventTransparency } from 'ical-generator';
import { DateTime } from 'luxon';
import { htmlToText } from './html';
import { inRepeatedWallTime, vtimezoneLines, type YearSpan } from './vtimezone';

/** One event as RFC 5545 needs it; built from a stored event or a dynamic link. */
export interface IcsEvent {
  /** The event's bare uid; the ICS UID is derived from it (see icsUid). */
  uid: string;
  sequence: number;
  title: string;
  descriptionHtml: string | null;
  location: string | null;
  /** The event page, shown as URL and appended to the description. */
  url: string | null;
  startMs: number;
  endMs: number;
  /** All-day: startMs/endMs are UTC midnights of the first and the inclusive last day. */
  isAllDay: boolean;
  timezone: string;
  recurrenceRule: string | null;
  /** Minutes before the start; null for no alarm. */
  reminderBefore: number | null;
  busyType: 'busy' | 'free' | null;
  /** When the event was last revised (DTSTAMP of published calendars, LAST-MODIFIED). */
  updatedMs: number;
  createdMs?: number;
  cancelled?: boolean;
}

/**
 * An ATTENDEE of an iTIP message. With `answer` the attendee has already answered (an RSVP
 * confirmation: PARTSTAT set, no reply asked); without it a REQUEST asks for a reply.
 */
export interface IcsAttendee {
  email: string;
  name?: string | null;
  answer?: 'ACCEPTED' | 'TENTATIVE' | 'DECLINED';
}

/** ical-generator's attendee data for an IcsAttendee (one place, used by the mail worker's templates too). */
export const attendeeData = (a: IcsAttendee, method: IcsOptions['method']): ICalAttendeeData => ({
  email: a.email,
  name: a.name ?? undefined,
  rsvp: method === 'REQUEST' && !a.answer,
  ...(a.answer ? { status: ICalAttendeeStatus[a.answer] } : {}),
});

/**
 * ical-generator's organizer data. It refuses an organizer without a name, which a bare
 * MAIL_FROM (`no-reply@example.com`) or an organizer named "" is: the address stands in as CN.
 */
export const organizerData = (o: { name: string; email: string }) => ({ name: o.name || o.email, email: o.email });

export interface IcsOptions {
  /** Host part of UIDs (the public host), so UIDs are the same in files, feeds and emails. */
  uidHost: string;
  method?: 'PUBLISH' | 'REQUEST' | 'CANCEL';
  calendarName?: string;
  organizer?: { name: string; email: string };
  attendees?: IcsAttendee[];
  /** DTSTAMP for iTIP messages (when the message is made); published files use updatedMs. */
  stampMs?: number;
  /** How often subscribers should refresh a feed (REFRESH-INTERVAL / X-PUBLISHED-TTL). */
  refreshMinutes?: number;
}

/** The ICS UID of an event: stable across every file, feed and email. */
export const icsUid = (uid: string, host: string) => `evt_${uid}@${host}`;

/**
 * TEXT values (RFC 5545 3.3.11): backslash, semicolon, comma and line breaks (CRLF, a lone
 * CR or LF) escaped, and the other control characters TEXT does not allow dropped, so no
 * value can start a content line of its own.
 */
const escapeText = (value: string) =>
  value
    .replace(/[\\;,]/g, (c) => `\\${c}`)
    .replace(/\r\n|\r|\n/g, '\\n')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ''); // eslint-disable-line no-control-regex

/**
 * Folds one content line at 75 octets (continuation lines start with a space), never inside
 * a UTF-8 sequence.
 */
function foldLine(line: string): string {
  if (Buffer.byteLength(line) <= 75) return line;
  let out = '';
  let width = 0;
  for (const ch of line) {
    const cp = ch.codePointAt(0) as number;
    const bytes = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (width + bytes > 75) {
      out += '\r\n ';
      width = 1;
    }
    out += ch;
    width += bytes;
  }
  return out;
}

/** A recurrence without an end, or ending later, is covered this many years from its start or from now. */
const RECURRENCE_YEARS = 30;
const DAY_MS = 86_400_000;
/** The longest period of each frequency. */
const PERIOD_MS = new Map<string | undefined, number>([
  ['SECONDLY', 1000],
  ['MINUTELY', 60_000],
  ['HOURLY', 3_600_000],
  ['DAILY', DAY_MS],
  ['WEEKLY', 7 * DAY_MS],
  ['MONTHLY', 31 * DAY_MS],
  ['YEARLY', 366 * DAY_MS],
]);

/**
 * Weekdays of which one at least is one every month has (a weekday, or at most the 4th or
 * 4th-last of it): then every month has an occurrence.
 */
const everyMonthDays = (v: string | undefined) => v !== undefined && v.split(',').some((d) => /^[+-]?[1-4]?[A-Z]{2}$/.test(d));
/** Days of the month of which one at least is one every month has. */
const everyMonthDates = (v: string | undefined) => v !== undefined && v.split(',').some((d) => Math.abs(Number(d)) <= 28);

/**
 * How many periods can pass from one occurrence to the next, for rules whose periods all
 * have one (or nearly: a DTSTART on the 31st skips months, on 29 February years); null for
 * rules whose BY parts can leave periods empty for longer (Friday the 13th).
 */
function periodsBetween(freq: string | undefined, by: Map<string, string>): number | null {
  const keys = [...by.keys()];
  const only = (...allowed: string[]) => keys.every((key) => allowed.includes(key));
  if (!keys.length) return freq === 'MONTHLY' ? 2 : freq === 'YEARLY' ? 8 : 1;
  if (freq === 'WEEKLY' && only('BYDAY')) return 1;
  if (freq === 'MONTHLY' && only('BYDAY') && everyMonthDays(by.get('BYDAY'))) return 1;
  if (freq === 'MONTHLY' && only('BYMONTHDAY') && everyMonthDates(by.get('BYMONTHDAY'))) return 1;
  if (freq === 'YEARLY' && only('BYMONTH', 'BYDAY') && everyMonthDays(by.get('BYDAY'))) return 1;
  if (freq === 'YEARLY' && only('BYMONTH', 'BYMONTHDAY') && everyMonthDates(by.get('BYMONTHDAY'))) return 1;
  return null;
}

/**
 * The last year (UTC, give or take a few) an event's dates reach, its recurrence included:
 * UNTIL's year; for a COUNT, how long that many occurrences take at most when that is
 * known; otherwise the horizon. The VTIMEZONE covers five years more.
 */
function lastYearOf(e: ZoneDates, startYear: number, endYear: number): number {
  if (!e.recurrenceRule) return endYear;
  const horizon = Math.max(startYear, new Date().getUTCFullYear()) + RECURRENCE_YEARS;
  const parts = new Map(e.recurrenceRule.split(';').map((p) => p.split('=') as [string, string]));
  const until = parts.get('UNTIL');
  const count = Number(parts.get('COUNT')); // NaN without one
  const freq = parts.get('FREQ');
  const period = PERIOD_MS.get(freq);
  const by = new Map([...parts].filter(([key]) => key.startsWith('BY')));
  const between = period ? periodsBetween(freq, by) : null;
  let last = horizon;
  if (until) last = Number(until.slice(0, 4)) + 1;
  else if (count && between !== null) {
    const spanMs = (count - 1) * Number(parts.get('INTERVAL') ?? '1') * between * (period as number);
    last = startYear + Math.ceil(spanMs / (365 * DAY_MS)) + 1;
  }
  return Math.max(endYear, Math.min(last, horizon));
}

/**
 * The years each zone's dates fall in, over the timed events of a file: what its VTIMEZONE
 * must describe. UTC years: the VTIMEZONE covers a year more on each side.
 */
function zoneSpans(events: ZoneDates[]): Map<string, YearSpan> {
  const spans = new Map<string, YearSpan>();
  for (const e of events) {
    if (e.isAllDay || e.timezone === 'UTC') continue;
    const from = new Date(e.startMs).getUTCFullYear();
    const end = new Date(Math.max(e.endMs, e.startMs)).getUTCFullYear();
    const to = lastYearOf(e, from, end);
    const span = spans.get(e.timezone);
    spans.set(e.timezone, span ? { from: Math.min(span.from, from), to: Math.max(span.to, to) } : { from, to });
  }
  return spans;
}

/** The cached text of `key`, made and cached when missing; a full cache is emptied first. */
function remember(cache: Map<string, string>, max: number, key: string, make: () => string): string {
  let text = cache.get(key);
  if (text === undefined) {
    text = make();
    if (cache.size >= max) cache.clear();
    cache.set(key, text);
  }
  return text;
}

const vtimezones = new Map<string, string>();
const VTIMEZONES_MAX = 10_000;
/** The VTIMEZONE of a zone for dates in those years, from the runtime's time-zone data (see vtimezone.ts). */
function vtimezone(zone: string, span: YearSpan): string {
  return remember(vtimezones, VTIMEZONES_MAX, `${zone}|${span.from}|${span.to}`, () => {
    const lines = vtimezoneLines(zone, span);
    return lines.length ? `${lines.join('\r\n')}\r\n` : '';
  });
}

/**
 * The instant as a DateTime in its zone whose wall time (what ical-generator writes beside
 * the TZID) is the API's: offsets rounded to the minute, as the VTIMEZONE's are. They differ
 * from luxon's only in local mean time (Monrovia until 1972: -00:44:30), where the instant
 * is moved by those seconds.
 */
function wallTime(ms: number, zone: string): DateTime {
  const local = DateTime.fromMillis(ms, { zone });
  const rounded = Math.round(local.offset); // as zoneOffsetMinutes rounds it
  return local.offset === rounded ? local : local.plus({ milliseconds: (rounded - local.offset) * 60_000 });
}

const publishedVevents = new Map<string, string>();
const PUBLISHED_VEVENTS_MAX = 50_000;

/** One VEVENT, unfolded, written by ical-generator. */
function vevent(cal: ReturnType<typeof ical>, e: IcsEvent, opts: IcsOptions): string {
  const text = [e.descriptionHtml ? htmlToText(e.descriptionHtml) : '', e.url ?? ''].filter(Boolean).join('\n\n');
  const event = cal.createEvent({
    id: icsUid(e.uid, opts.uidHost),
    sequence: e.sequence,
    stamp: new Date(opts.stampMs ?? e.updatedMs),
    lastModified: new Date(e.updatedMs),
    ...(e.createdMs ? { created: new Date(e.createdMs) } : {}),
    summary: e.title,
    description: text || null,
    location: e.location ?? null,
    url: e.url ?? null,
    ...(e.isAllDay
      ? {
          allDay: true,
          // ical-generator writes a Date's UTC day.
          start: new Date(e.startMs),
          end: new Date(e.endMs + DAY_MS),
        }
      : // A single event in the hour repeated when clocks go back is written in UTC: no
        // wall time names it for every reader. A recurring one keeps its wall time.
        !e.recurrenceRule && (inRepeatedWallTime(e.timezone, e.startMs) || inRepeatedWallTime(e.timezone, e.endMs))
        ? { start: new Date(e.startMs), end: new Date(e.endMs) }
        : {
            timezone: e.timezone,
            start: wallTime(e.startMs, e.timezone),
            end: wallTime(e.endMs, e.timezone),
          }),
    repeating: e.recurrenceRule ? `RRULE:${e.recurrenceRule}` : null,
    transparency: e.busyType === 'free' ? ICalEventTransparency.TRANSPARENT : e.busyType === 'busy' ? ICalEventTransparency.OPAQUE : null,
    status: e.cancelled ? ICalEventStatus.CANCELLED : opts.method === 'REQUEST' ? ICalEventStatus.CONFIRMED : null,
  });
  if (e.reminderBefore !== null) event.createAlarm({ type: ICalAlarmType.display, trigger: e.reminderBefore * 60, description: e.title });
  if (opts.organizer) event.organizer(organizerData(opts.organizer));
  for (const a of opts.attendees ?? []) {
    event.createAttendee(attendeeData(a, opts.method));
  }
  return event.toString();
}

/** Folds every content line of a run of whole lines (each ending with CRLF). */
export const fold = (lines: string) => lines.split('\r\n').map(foldLine).join('\r\n');

/** What a file's VTIMEZONEs are written from: the dates of its timed events. */
type ZoneDates = Pick<IcsEvent, 'isAllDay' | 'timezone' | 'startMs' | 'endMs' | 'recurrenceRule'>;

/**
 * The start of a file, up to its first VEVENT: the calendar's properties and a VTIMEZONE for
 * each zone of `events`, covering the years their dates reach. Folded.
 */
export function icsHead(events: ZoneDates[], opts: IcsOptions): string {
  const parts: string[] = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//calendar-service//events//EN'];
  if (opts.method) parts.push(`METHOD:${opts.method}`);
  if (opts.calendarName) parts.push(`NAME:${escapeText(opts.calendarName)}`, `X-WR-CALNAME:${escapeText(opts.calendarName)}`);
  if (opts.refreshMinutes) parts.push(`REFRESH-INTERVAL;VALUE=DURATION:PT${opts.refreshMinutes}M`, `X-PUBLISHED-TTL:PT${opts.refreshMinutes}M`);
  let head = `${parts.join('\r\n')}\r\n`;
  for (const [zone, span] of zoneSpans(events)) head += vtimezone(zone, span);
  return fold(head);
}

/** The end of every file. */
export const ICS_END = 'END:VCALENDAR\r\n';

/**
 * The VEVENTs of `events`, folded: written by ical-generator, put together here (see
 * buildIcs). A file can be written in parts: icsHead over all its events, then this for
 * one batch after another, then ICS_END.
 */
export function icsEvents(events: IcsEvent[], opts: IcsOptions): string {
  // Only its VEVENTs are written: the calendar's properties (PRODID, METHOD) are icsHead's.
  const cal = ical();
  // Published (non-iTIP) VEVENTs depend only on the event's values: remember them, so a feed
  // rebuilt after one change re-serializes that one event, not all of them.
  const memo = !opts.method && !opts.organizer && !opts.attendees && opts.stampMs === undefined;
  let body = '';
  for (const e of events) {
    if (!memo) {
      body += vevent(cal, e, opts);
      continue;
    }
    const key = createHash('sha1').update(opts.uidHost).update(JSON.stringify(e)).digest('base64');
    body += remember(publishedVevents, PUBLISHED_VEVENTS_MAX, key, () => vevent(cal, e, opts));
  }
  return fold(body);
}

/**
 * RFC 5545 text. ical-generator writes each VEVENT (escaping, dates, RRULE, VALARM, iTIP
 * ORGANIZER/ATTENDEE); the calendar around them is put together and folded here, because
 * the library's own calendar.toString() folds with a TextEncoder per character, which made
 * a 10k-event feed take seconds. Timed events carry TZID plus a VTIMEZONE, so recurrences
 * keep their wall time across DST; all-day events use VALUE=DATE with the exclusive next
 * day as DTEND. Every content line ends with CRLF, the last one too (RFC 5545 §3.1).
 */
export function buildIcs(events: IcsEvent[], opts: IcsOptions): string {
  return icsHead(events, opts) + icsEvents(events, opts) + ICS_END;
}
