import { createHash } from 'node:crypto';
import ical, { ICalAlarmType, type ICalAttendeeData, ICalAttendeeStatus, ICalCalendarMethod, ICalEventStatus, ICalEventTransparency } from 'ical-generator';
import { DateTime } from 'luxon';
import { htmlToText } from './html';
import { vtimezoneLines } from './vtimezone';

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

const METHODS = { PUBLISH: ICalCalendarMethod.PUBLISH, REQUEST: ICalCalendarMethod.REQUEST, CANCEL: ICalCalendarMethod.CANCEL };

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
  if (line.length <= 18 || Buffer.byteLength(line) <= 75) return line;
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

const vtimezones = new Map<string, string>();
/** The VTIMEZONE of a zone, from the runtime's time-zone data (see vtimezone.ts), made once a year per zone. */
function vtimezone(zone: string): string {
  const year = new Date().getUTCFullYear();
  const key = `${zone}|${year}`;
  let text = vtimezones.get(key);
  if (text === undefined) {
    const lines = vtimezoneLines(zone, year);
    text = lines.length ? `${lines.join('\r\n')}\r\n` : '';
    vtimezones.set(key, text);
  }
  return text;
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
          start: DateTime.fromMillis(e.startMs, { zone: 'UTC' }),
          end: DateTime.fromMillis(e.endMs, { zone: 'UTC' }).plus({ days: 1 }),
        }
      : {
          timezone: e.timezone,
          start: DateTime.fromMillis(e.startMs, { zone: e.timezone }),
          end: DateTime.fromMillis(e.endMs, { zone: e.timezone }),
        }),
    repeating: e.recurrenceRule ? `RRULE:${e.recurrenceRule}` : null,
    transparency: e.busyType === 'free' ? ICalEventTransparency.TRANSPARENT : e.busyType === 'busy' ? ICalEventTransparency.OPAQUE : null,
    status: e.cancelled ? ICalEventStatus.CANCELLED : opts.method === 'REQUEST' ? ICalEventStatus.CONFIRMED : null,
  });
  if (e.reminderBefore !== null) event.createAlarm({ type: ICalAlarmType.display, trigger: e.reminderBefore * 60, description: e.title });
  if (opts.organizer) event.organizer({ name: opts.organizer.name, email: opts.organizer.email });
  for (const a of opts.attendees ?? []) {
    event.createAttendee(attendeeData(a, opts.method));
  }
  return event.toString();
}

/**
 * RFC 5545 text. ical-generator writes each VEVENT (escaping, dates, RRULE, VALARM, iTIP
 * ORGANIZER/ATTENDEE); the calendar around them is put together and folded here, because
 * the library's own calendar.toString() folds with a TextEncoder per character, which made
 * a 10k-event feed take seconds. Timed events carry TZID plus a VTIMEZONE, so recurrences
 * keep their wall time across DST; all-day events use VALUE=DATE with the exclusive next
 * day as DTEND.
 */
export function buildIcs(events: IcsEvent[], opts: IcsOptions): string {
  const cal = ical({ prodId: { company: 'calendar-service', product: 'events', language: 'EN' } });
  if (opts.method) cal.method(METHODS[opts.method]);
  const parts: string[] = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//calendar-service//events//EN'];
  if (opts.method) parts.push(`METHOD:${opts.method}`);
  if (opts.calendarName) parts.push(`NAME:${escapeText(opts.calendarName)}`, `X-WR-CALNAME:${escapeText(opts.calendarName)}`);
  if (opts.refreshMinutes) parts.push(`REFRESH-INTERVAL;VALUE=DURATION:PT${opts.refreshMinutes}M`, `X-PUBLISHED-TTL:PT${opts.refreshMinutes}M`);
  let head = `${parts.join('\r\n')}\r\n`;
  const zones = new Set(events.filter((e) => !e.isAllDay && e.timezone !== 'UTC').map((e) => e.timezone));
  for (const zone of zones) head += vtimezone(zone);

  // Published (non-iTIP) VEVENTs depend only on the event's values: remember them, so a feed
  // rebuilt after one change re-serializes that one event, not all of them.
  const memo = !opts.method && !opts.organizer && !opts.attendees && opts.stampMs === undefined;
  let body = '';
  for (const e of events) {
    const key = memo ? createHash('sha1').update(opts.uidHost).update(JSON.stringify(e)).digest('base64') : '';
    let text = memo ? publishedVevents.get(key) : undefined;
    if (text === undefined) {
      text = vevent(cal, e, opts);
      if (memo) {
        if (publishedVevents.size >= PUBLISHED_VEVENTS_MAX) publishedVevents.clear();
        publishedVevents.set(key, text);
      }
    }
    body += text;
  }
  const unfolded = `${head}${body}END:VCALENDAR`;
  // Every content line ends with CRLF, the last one too (RFC 5545 §3.1).
  return `${unfolded.split('\r\n').map(foldLine).join('\r\n')}\r\n`;
}

/** A file name for the event's .ics: its title, reduced to safe characters. */
export function icsFileName(title: string): string {
  const base = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    // Runs are one dash by now.
    .replace(/^-|-$/g, '')
    .slice(0, 60)
    .toLowerCase();
  return `${base || 'event'}.ics`;
}
