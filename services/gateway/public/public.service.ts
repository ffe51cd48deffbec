import { type EventRow, type EventWithCalendar } from '../../../shared/events/event-rows';
import { serialize as serializeCookie } from 'cookie';
import { type EventView, storedEventView } from '../../../shared/calendar/event-view';
import { WEB_PLATFORMS, type WebPlatform } from '../calendar/platform-urls';
import { formatDateRange } from '../../../shared/calendar/format';
import { eventLinks } from '../calendar/platforms';
import { recurrenceText } from '../../../shared/calendar/recurrence';
import { offsetString, zoneOffsetMinutes } from '../../../shared/calendar/time-zones';
import { UID_PATTERN } from '../../../shared/ids/ids';
import { isPublished } from '../../../shared/mail/queue-mail';
import type { AppContext } from '../context';
import { findEvent, listUpcomingPublishedEvents } from '../events/events.repository';
import { findPublicCalendar } from '../calendars/calendars.repository';
import { type CalendarRow } from '../../../shared/events/event-rows';
import { findShortLink } from './short-links.repository';
import { unlockCookieName, unlockCookieValue, verifyEventAccess, verifyUnlockCookie } from '../../../shared/links/signatures';
import { verifyAccessCode } from '../events/access-code';
import type { LimitVerdict } from '../http/rate-limits';
import type { UnlockLimits } from './unlock-limits';
import { linkTexts, type Locale } from './i18n';
import type { EventCard } from './views';
import type { Visitor } from '../http/visitor';

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

/** A public calendar by its uid (not deleted, its team not closed), or undefined. */
export const findCalendar = (deps: PublicDeps, uid: string): Promise<CalendarRow | undefined> => findPublicCalendar(deps.db, uid);

/** What a short link's slug leads to: a public calendar, or a published event; null for anything else. */
export async function shortLinkTarget(deps: PublicDeps, slug: string): Promise<{ calendar: CalendarRow } | { event: EventWithCalendar } | null> {
  // Only what a short link can be reaches the database (the pattern of short_link).
  const target = SHORT_LINK_PATTERN.test(slug) ? await findShortLink(deps.db, slug) : null;
  if (target?.calendarUid) {
    const calendar = await findCalendar(deps, target.calendarUid);
    return calendar ? { calendar } : null;
  }
  // A hidden event's link must not tell its uid, nor that it exists: as an unknown link.
  const event = target?.eventUid ? await findPublishedEvent(deps, target.eventUid) : null;
  return event ? { event } : null;
}

/** A calendar's next events as cards (upcoming, published, unprotected), `offset` skipped, for its page and its embed. */
export async function upcomingCards(deps: PublicDeps, calendar: CalendarRow, limit: number, offset = 0): Promise<EventCard[]> {
  const rows = await listUpcomingPublishedEvents(deps.db, calendar, { now: deps.clock.now().toISOString(), limit: offset + limit });
  return rows.slice(offset).map((event) => {
    const view = eventView({ event, calendar }, deps.config.publicBaseUrl);
    return eventCard(view, linksWithAccess(view.pageUrl, ''));
  });
}

const SHORT_LINK_PATTERN = /^[A-Za-z0-9-]{1,50}$/;

/** A Set-Cookie value for one event's pages only (path /e/{uid}), kept from scripts. */
export const eventCookie = (baseUrl: string, eventUid: string, name: string, value: string, maxAgeSeconds: number) =>
  serializeCookie(name, value, { httpOnly: true, secure: baseUrl.startsWith('https://'), sameSite: 'lax', path: `/e/${eventUid}`, maxAge: maxAgeSeconds });

/** What a JSON caller is told when a protected event is asked for without access. */
export const PROTECTED_MESSAGE = 'This event is protected: open it with its access code or a signed link.';

export type Access = { granted: true; query: string; personal: boolean } | { granted: false };

/**
 * Who may see a protected event: a request carrying a valid signed pair (which the page's
 * buttons then carry on), or a browser holding the unlock cookie, either made for the code
 * the event has now. Unprotected: everyone.
 */
export function accessTo(deps: PublicDeps, visitor: Pick<Visitor, 'query' | 'cookies'>, e: EventRow): Access {
  if (!e.access_code_hash) return { granted: true, query: '', personal: false };
  // The cached row carries the code's hash, which both MACs cover: no query beyond the event's.
  const locked = { uid: e.uid, access_code_hash: e.access_code_hash };
  const now = deps.clock.now().getTime();
  const { expires, signature } = visitor.query;
  if (verifyEventAccess(deps.config.appKey, locked, expires, signature, now)) {
    const query = `?expires=${encodeURIComponent(String(expires))}&signature=${encodeURIComponent(String(signature))}`;
    return { granted: true, query, personal: true };
  }
  if (verifyUnlockCookie(deps.config.appKey, locked, visitor.cookies[unlockCookieName(e.uid)], now)) return { granted: true, query: '', personal: true };
  return { granted: false };
}

type CodeOutcome =
  | { kind: 'unlocked'; cookieValue: string; verdict: LimitVerdict }
  | { kind: 'wrong' | 'too_many'; verdict: LimitVerdict };

/**
 * An access code tried on a protected event from an address. The try takes its point from
 * every brute-force limit before the (slow) check, so a burst of guesses cannot all get
 * through; past a limit the code is not checked at all. A right code gives its points back
 * and earns the unlock cookie's value, bound to the code the event has now.
 */
export async function tryAccessCode(
  deps: PublicDeps,
  limits: UnlockLimits,
  event: { uid: string; access_code_hash: string },
  code: string,
  ip: string | undefined,
): Promise<CodeOutcome> {
  const attempt = await limits.take(event, ip);
  if (attempt.verdict.over) return { kind: 'too_many', verdict: attempt.verdict };
  if (!(await verifyAccessCode(code, event.access_code_hash))) return { kind: 'wrong', verdict: attempt.verdict };
  await attempt.giveBack();
  return { kind: 'unlocked', cookieValue: unlockCookieValue(deps.config.appKey, event, deps.clock.now().getTime()), verdict: attempt.verdict };
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
