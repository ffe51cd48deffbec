import { eventPublicUrl } from '../links/public-urls';
import { pgTimestampToMillis } from './dates';
import type { IcsEvent } from './ics';
import { normalizeUntil } from './recurrence';

/**
 * What the public surface needs to show an event or send it to a calendar platform. Built
 * from a stored event or from the parameters of a dynamic link.
 */
export interface EventView
  extends Pick<
    IcsEvent,
    'title' | 'descriptionHtml' | 'location' | 'startMs' | 'endMs' | 'isAllDay' | 'timezone' | 'recurrenceRule' | 'reminderBefore' | 'busyType' | 'sequence' | 'updatedMs'
  > {
  /** Identity for the ICS UID (stored events: their uid; dynamic links: a hash of the values). */
  uid: string;
  locationUrl: string | null;
  imageUrl: string | null;
  /** The canonical event page, linked from descriptions cut short and from ICS files. */
  pageUrl: string;
}

export function toIcsEvent(v: EventView): IcsEvent {
  return {
    uid: v.uid,
    sequence: v.sequence,
    title: v.title,
    descriptionHtml: v.descriptionHtml,
    location: v.location ?? v.locationUrl,
    url: v.pageUrl,
    startMs: v.startMs,
    endMs: v.endMs,
    isAllDay: v.isAllDay,
    timezone: v.timezone,
    recurrenceRule: v.recurrenceRule,
    reminderBefore: v.reminderBefore,
    busyType: v.busyType,
    updatedMs: v.updatedMs,
  };
}

/** The columns of a stored event that its view is made of (the events table's names). */
export interface StoredEvent {
  uid: string;
  title: string;
  description: string | null;
  location: string | null;
  location_url: string | null;
  image_url: string | null;
  date_start: string;
  date_end: string;
  is_all_day: boolean;
  timezone: string;
  recurrence_rule: string | null;
  reminder_before: number | null;
  busy_type: 'busy' | 'free' | null;
  sequence: number;
  updated_at: string;
}

/** A stored event as the public surface, its .ics files and its emails show it. */
export function storedEventView(e: StoredEvent, baseUrl: string): EventView {
  return {
    uid: e.uid,
    title: e.title,
    descriptionHtml: e.description,
    location: e.location,
    locationUrl: e.location_url,
    imageUrl: e.image_url,
    startMs: pgTimestampToMillis(e.date_start),
    endMs: pgTimestampToMillis(e.date_end),
    isAllDay: e.is_all_day,
    timezone: e.timezone,
    // Fitted on write; rows stored before that are fitted here, where the rule is published.
    recurrenceRule: e.recurrence_rule ? normalizeUntil(e.recurrence_rule, { isAllDay: e.is_all_day, timezone: e.timezone }) : null,
    reminderBefore: e.reminder_before,
    busyType: e.busy_type,
    sequence: e.sequence,
    updatedMs: pgTimestampToMillis(e.updated_at),
    pageUrl: eventPublicUrl(baseUrl, e.uid),
  };
}
