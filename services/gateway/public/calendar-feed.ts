import { createHash } from 'node:crypto';
import { pgTimestampToMillis } from '../../../shared/calendar/dates';
import { toIcsEvent } from '../calendar/event-view';
import { buildIcs } from '../../../shared/calendar/ics';
import type { CalendarRow } from '../calendars/calendars.repository';
import type { EventWithCalendar } from '../events/events.repository';
import { type FileNames, titleFileNames } from '../http/content-disposition';
import { lastOffFeedChange, listPublishedEvents } from '../events/events.repository';
import { eventView, type PublicDeps } from './public.service';

export interface Feed {
  calendarId: number;
  /** File names for Content-Disposition, from the calendar's name. */
  fileNames: FileNames;
  body: string;
  /** Strong validator derived from the content, so every gateway computes the same one. */
  etag: string;
  lastModifiedMs: number;
}

/** How often subscribed calendar apps are asked to refresh. */
const FEED_REFRESH_MINUTES = 60;

/**
 * A calendar's ICS feed: every published event. Built once and kept in the feed cache
 * until an event of the calendar (or the calendar) changes, so a conditional request is
 * answered with a 304 without touching Postgres.
 */
export async function calendarFeed(deps: PublicDeps, calendar: CalendarRow): Promise<Feed> {
  const cached = deps.caches.feeds.get(calendar.uid);
  if (cached) return cached;
  const startedAt = deps.caches.feeds.begin();
  const [rows, lastChange] = await Promise.all([listPublishedEvents(deps.db, calendar.id), lastOffFeedChange(deps.db, calendar.id)]);
  const base = deps.config.publicBaseUrl;
  const body = buildIcs(
    rows.map((event) => toIcsEvent(eventView({ event, calendar } as EventWithCalendar, base))),
    { uidHost: new URL(base).host, calendarName: calendar.name, refreshMinutes: FEED_REFRESH_MINUTES },
  );
  // An event leaving the feed changes it too, not only those in it.
  const lastModifiedMs = Math.max(
    pgTimestampToMillis(calendar.updated_at),
    lastChange ? pgTimestampToMillis(lastChange) : 0,
    ...rows.map((r) => pgTimestampToMillis(r.updated_at)),
  );
  const feed: Feed = {
    calendarId: calendar.id,
    fileNames: titleFileNames(calendar.name, 'ics'),
    body,
    etag: `"${createHash('sha1').update(body).digest('base64url')}"`,
    lastModifiedMs: Math.floor(lastModifiedMs / 1000) * 1000,
  };
  deps.caches.feeds.set(calendar.uid, feed, startedAt);
  return feed;
}

/** True when the request's validators show the client already has this feed. */
export function notModified(feed: Feed, ifNoneMatch: string | undefined, ifModifiedSince: string | undefined): boolean {
  if (ifNoneMatch) return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === feed.etag || tag.trim() === '*');
  if (ifModifiedSince) {
    const since = Date.parse(ifModifiedSince);
    return !Number.isNaN(since) && feed.lastModifiedMs <= since;
  }
  return false;
}
