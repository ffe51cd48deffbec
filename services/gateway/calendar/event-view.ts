import type { IcsEvent } from '../../../shared/calendar/ics';

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
