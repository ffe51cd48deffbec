import { type EventRow, type EventWithCalendar } from '../../../shared/events/event-rows';
import type { Request } from 'express';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import { type EventView, storedEventView } from '../../../shared/calendar/event-view';
import { WEB_PLATFORMS, type WebPlatform } from '../calendar/platform-urls';
import { formatDateRange } from '../../../shared/calendar/format';
import { eventLinks } from '../calendar/platforms';
import { recurrenceText } from '../../../shared/calendar/recurrence';
import { offsetString, zoneOffsetMinutes } from '../../../shared/calendar/time-zones';
import { UID_PATTERN } from '../../../shared/ids/ids';
import { isPublished } from '../../../shared/mail/queue-mail';
import type { AppContext } from '../context';
import { findEvent } from '../events/events.repository';
import { unlockCookieName, verifyEventAccess, verifyUnlockCookie } from '../../../shared/links/signatures';
import { linkTexts, type Locale } from './i18n';
import type { EventCard } from './views';

export type PublicDeps = Pick<AppContext, 'db' | 'caches' | 'config' | 'clock'>;


/** A published event by its public uid (from the shared event cache when it is live), or null. */
export async function findPublishedEvent(deps: PublicDeps, uid: string): Promise<EventWithCalendar | null> {
  if (!UID_PATTERN.test(uid)) return null;
  let found = deps.caches.events.get(uid);
  if (!found) {
    const startedAt = deps.caches.events.begin();
    found = await findEvent(deps.db, null, uid);
    if (!found) return null;
    deps.caches.events.set(uid, found, startedAt);
  }
  return isPublished(found.event) ? found : null;
}

/** A Set-Cookie value for one event's pages only (path /e/{uid}), kept from scripts. */
export const eventCookie = (baseUrl: string, eventUid: string, name: string, value: string, maxAgeSeconds: number) =>
  serializeCookie(name, value, { httpOnly: true, secure: baseUrl.startsWith('https://'), sameSite: 'lax', path: `/e/${eventUid}`, maxAge: maxAgeSeconds });

/** The request's cookies (none: an empty object). */
export const cookiesOf = (req: Request): Record<string, string | undefined> => (req.headers.cookie ? parseCookies(req.headers.cookie) : {});

/** What a JSON caller is told when a protected event is asked for without access. */
export const PROTECTED_MESSAGE = 'This event is protected: open it with its access code or a signed link.';

export type Access = { granted: true; query: string; personal: boolean } | { granted: false };

/**
 * Who may see a protected event: a request carrying a valid signed pair (which the page's
 * buttons then carry on), or a browser holding the unlock cookie, either made for the code
 * the event has now. Unprotected: everyone.
 */
export function accessTo(deps: PublicDeps, req: Request, e: EventRow): Access {
  if (!e.access_code_hash) return { granted: true, query: '', personal: false };
  // The cached row carries the code's hash, which both MACs cover: no query beyond the event's.
  const locked = { uid: e.uid, access_code_hash: e.access_code_hash };
  const now = deps.clock.now().getTime();
  const { expires, signature } = req.query as Record<string, unknown>;
  if (verifyEventAccess(deps.config.appKey, locked, expires, signature, now)) {
    const query = `?expires=${encodeURIComponent(String(expires))}&signature=${encodeURIComponent(String(signature))}`;
    return { granted: true, query, personal: true };
  }
  if (verifyUnlockCookie(deps.config.appKey, locked, cookiesOf(req)[unlockCookieName(e.uid)], now)) return { granted: true, query: '', personal: true };
  return { granted: false };
}

// Views and platform URLs of cached events, made once per cached object (a changed event
// is a new object in the cache, so nothing here outlives the version it describes).
const memo = new WeakMap<EventWithCalendar, { baseUrl: string; view: EventView; urls: Map<string, string> }>();

function memoOf(found: EventWithCalendar, baseUrl: string) {
  let entry = memo.get(found);
  if (!entry || entry.baseUrl !== baseUrl) {
    entry = { baseUrl, view: eventView(found, baseUrl), urls: new Map() };
    memo.set(found, entry);
  }
  return entry;
}

/** eventView, remembered for the cached event object. */
export const viewOf = (found: EventWithCalendar, baseUrl: string): EventView => memoOf(found, baseUrl).view;

/** The platform's add-event URL for a stored event in a language, remembered for the cached event object. */
export function webUrlOf(found: EventWithCalendar, baseUrl: string, platform: WebPlatform, locale: Locale): string {
  const entry = memoOf(found, baseUrl);
  const key = `${platform} ${locale}`;
  let url = entry.urls.get(key);
  if (!url) {
    url = WEB_PLATFORMS[platform](entry.view, linkTexts(locale));
    entry.urls.set(key, url);
  }
  return url;
}

export function eventView({ event }: EventWithCalendar, baseUrl: string): EventView {
  return storedEventView(event, baseUrl);
}

/** The formatted card of an event; `links` maps each platform to its address. */
export function eventCard(v: EventView, links: Record<string, string>): EventCard {
  return {
    title: v.title,
    when: formatDateRange({ isAllDay: v.isAllDay, startMs: v.startMs, endMs: v.endMs, zone: v.timezone }),
    zone: v.isAllDay ? null : `${v.timezone.replace(/_/g, ' ')}, GMT${offsetString(zoneOffsetMinutes(v.timezone, v.startMs))}`,
    repeats: v.recurrenceRule ? recurrenceText(v.recurrenceRule, v.timezone) : null,
    rule: v.recurrenceRule,
    location: v.location,
    locationUrl: v.locationUrl,
    descriptionHtml: v.descriptionHtml,
    links,
    pageUrl: v.pageUrl,
    startMs: v.startMs,
    endMs: v.endMs,
    isAllDay: v.isAllDay,
    timezone: v.timezone,
  };
}

/** The event's own feed (one event, kept up to date): `/e/{uid}.ics`. */
export const eventFeedUrl = (pageUrl: string) => `${pageUrl}.ics`;

/** The event's platform links with the access query (signature) appended. */
export function linksWithAccess(pageUrl: string, query: string): Record<string, string> {
  const links: Record<string, string> = eventLinks(pageUrl);
  if (!query) return links;
  return Object.fromEntries(Object.entries(links).map(([k, v]) => [k, v + query]));
}
