import { getVtimezoneComponent } from '@touch4it/ical-timezones';
import ical, { ICalAlarmType, ICalCalendarMethod, ICalEventStatus, ICalEventTransparency } from 'ical-generator';
import { DateTime } from 'luxon';
import { htmlToText } from './html';

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

export interface IcsOptions {
  /** Host part of UIDs (the public host), so UIDs are the same in files, feeds and emails. */
  uidHost: string;
  method?: 'PUBLISH' | 'REQUEST' | 'CANCEL';
  calendarName?: string;
  organizer?: { name: string; email: string };
  attendees?: Array<{ email: string; name?: string | null }>;
  /** DTSTAMP for iTIP messages (when the message is made); published files use updatedMs. */
  stampMs?: number;
  /** How often subscribers should refresh a feed (REFRESH-INTERVAL / X-PUBLISHED-TTL). */
  refreshMinutes?: number;
}

/** The ICS UID of an event: stable across every file, feed and email. */
export const icsUid = (uid: string, host: string) => `evt_${uid}@${host}`;

const METHODS = { PUBLISH: ICalCalendarMethod.PUBLISH, REQUEST: ICalCalendarMethod.REQUEST, CANCEL: ICalCalendarMethod.CANCEL };

/**
 * RFC 5545 text (CRLF, 75-octet folding and escaping by ical-generator). Timed events carry
 * TZID plus a VTIMEZONE, so recurrences keep their wall time across DST; all-day events use
 * VALUE=DATE with the exclusive next day as DTEND.
 */
export function buildIcs(events: IcsEvent[], opts: IcsOptions): string {
  const cal = ical({ prodId: { company: 'calendar-service', product: 'events', language: 'EN' } });
  // An empty calendar zone with a generator: a VTIMEZONE for each event's zone, while each
  // event's own times stay as given (a named calendar zone would shift DTSTAMP and dates).
  cal.timezone({ name: '', generator: getVtimezoneComponent });
  if (opts.method) cal.method(METHODS[opts.method]);
  if (opts.calendarName) cal.name(opts.calendarName);
  if (opts.refreshMinutes) cal.ttl(opts.refreshMinutes * 60);

  for (const e of events) {
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
      event.createAttendee({ email: a.email, name: a.name ?? undefined, rsvp: opts.method === 'REQUEST' });
    }
  }
  // The timezone library adds a TZURL pointing at an outside site; clients need only the rules.
  return cal.toString().replace(/^TZURL:.*\r\n/gm, '');
}

/** A file name for the event's .ics: its title, reduced to safe characters. */
export function icsFileName(title: string): string {
  const base = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .toLowerCase();
  return `${base || 'event'}.ics`;
}
