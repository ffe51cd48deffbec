import type { EventView } from '../../../shared/calendar/event-view';
import { escapeHtml, htmlToText } from '../../../shared/calendar/html';
import { type WallClock, wallClock } from '../../../shared/calendar/time-zones';
import { type LinkTexts, linkTexts } from '../public/i18n';

/**
 * Add-event URLs of the web calendars, as they accept them today:
 * - Google: `calendar/render?action=TEMPLATE`; timed events in local wall time with `ctz`,
 *   all-day as `YYYYMMDD/YYYYMMDD` with an exclusive end and no `ctz`; RRULE in `recur`.
 * - Outlook.com and Office 365 deep links (`outlook.live.com`, `outlook.cloud.microsoft`):
 *   times in UTC with `Z`; all-day as dates with `allday=true` and an exclusive end; the
 *   body is read as HTML, so line breaks become <br>.
 * - Yahoo: `v=60` with upper-case `TITLE`/`ST`/`ET`/`DESC`; timed events in the event's
 *   local wall time without `Z`; a single all-day day as `ST` with `DUR=allday`, longer
 *   all-day events as `ST`/`ET` dates with an exclusive end (see yahooUrl for why).
 * - Google also takes the event's busy type twice: `trp` (RFC 5545 transparency, which it
 *   ignores on all-day events) and `crm` (`AVAILABLE`/`BUSY`, read on every event).
 * Only Google repeats events from a link; the others get the rule in words in the body.
 * The words a link adds (the rule, the link back to the page) are in the visitor's
 * language (`words`, English unless given). Every URL stays under MAX_URL: a long
 * description is cut at a word with a link to the page; when that alone is not enough, the
 * location and then the title are cut too.
 */
export const MAX_URL = 2000;

const pad = (n: number) => String(n).padStart(2, '0');
const ymd = (w: WallClock) => `${w.year}${pad(w.month)}${pad(w.day)}`;
const hms = (w: WallClock) => `${pad(w.hour)}${pad(w.minute)}${pad(w.second)}`;
const isoDay = (w: WallClock) => `${w.year}-${pad(w.month)}-${pad(w.day)}`;
/** `YYYYMMDDTHHMMSS` in the zone, without an offset. */
const localCompact = (ms: number, zone: string) => {
  const w = wallClock(ms, zone);
  return `${ymd(w)}T${hms(w)}`;
};
const utcIso = (ms: number) => `${new Date(ms).toISOString().slice(0, -5)}Z`; // without the milliseconds
const DAY_MS = 86_400_000;

type Params = Array<[string, string]>;

const encode = (params: Params) => params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');

const ENGLISH = linkTexts('en');

function describe(v: EventView, withRecurrenceNote: boolean, texts: LinkTexts): string {
  const parts: string[] = [];
  if (withRecurrenceNote && v.recurrenceRule) {
    const repeats = texts.repeats(v.recurrenceRule, v.timezone);
    if (repeats) parts.push(repeats);
  }
  if (v.descriptionHtml) parts.push(htmlToText(v.descriptionHtml));
  if (v.locationUrl && v.locationUrl !== v.location) parts.push(v.locationUrl);
  return parts.join('\n\n');
}

/** The texts of an add-event URL that may be cut to fit; an empty one leaves its parameter out. */
interface Texts {
  title: string;
  location: string;
  description: string;
}

/** Grapheme clusters (the default granularity), the same in every locale. */
const graphemes = new Intl.Segmenter();

/**
 * The longest prefix of `text` that `fits`, ending between two characters as people see them
 * (never inside a surrogate pair, which encodeURIComponent refuses, nor inside an emoji
 * sequence or before a combining mark); empty when no character fits.
 */
function longestFitting(text: string, fits: (prefix: string) => boolean): string {
  const ends = [0];
  // No more than MAX_URL units of text fit in a URL: the rest need not be segmented (a
  // boundary the slice makes is never chosen, as that much never fits).
  for (const { index, segment } of graphemes.segment(text.slice(0, MAX_URL))) ends.push(index + segment.length);
  // A longer prefix never makes a shorter URL, so the fitting ends are a run from 0.
  let lo = 0;
  let hi = ends.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(text.slice(0, ends[mid]))) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(0, ends[lo]);
}

/** The text cut to fit with an ellipsis (`…`), or null when nothing of it fits. */
function cutWithEllipsis(text: string, fits: (cut: string) => boolean): string | null {
  const kept = longestFitting(text, (prefix) => fits(`${prefix}…`)).trimEnd();
  return kept ? `${kept}…` : null;
}

/**
 * The URL with every text whole when it fits in MAX_URL. Otherwise, in this order until it
 * fits: the description is cut at a word and ends with a link back to the event page; the
 * description becomes that link alone; the location is cut (or left out); the title is cut.
 */
function fitted(build: (t: Texts) => string, texts: Texts, more: string): string {
  const full = build(texts);
  if (full.length <= MAX_URL) return full;
  const fits = (t: Texts) => build(t).length <= MAX_URL;
  const suffix = `…\n\n${more}`;
  let cut = longestFitting(texts.description, (prefix) => fits({ ...texts, description: prefix + suffix }));
  if (cut) {
    // A cut that already ends a word keeps it; otherwise the part-word goes. (The whole
    // description never fits with the suffix: it did not fit alone.)
    const endsWord = /\s/.test(texts.description[cut.length]);
    const lastSpace = cut.search(/\s\S*$/);
    if (!endsWord && lastSpace > cut.length * 0.6) cut = cut.slice(0, lastSpace);
    cut = cut.trimEnd();
    if (cut) return build({ ...texts, description: cut + suffix });
  }
  let t: Texts = { ...texts, description: more };
  if (fits(t)) return build(t);
  t = { ...t, location: cutWithEllipsis(t.location, (location) => fits({ ...t, location })) ?? '' };
  if (fits(t)) return build(t);
  t = { ...t, title: cutWithEllipsis(t.title, (title) => fits({ ...t, title })) ?? '…' };
  // Only a public base URL of near MAX_URL characters gets here: the link back goes too.
  return fits(t) ? build(t) : build({ ...t, description: '' });
}

const textsOf = (v: EventView, withRecurrenceNote: boolean, words: LinkTexts): Texts => ({
  title: v.title,
  location: v.location ?? v.locationUrl ?? '',
  description: describe(v, withRecurrenceNote, words),
});

function googleUrl(v: EventView, words: LinkTexts = ENGLISH): string {
  const dates: Params = v.isAllDay
    ? [['dates', `${ymd(wallClock(v.startMs, 'UTC'))}/${ymd(wallClock(v.endMs + DAY_MS, 'UTC'))}`]]
    : (() => {
        const s = wallClock(v.startMs, v.timezone);
        const e = wallClock(v.endMs, v.timezone);
        return [['dates', `${ymd(s)}T${hms(s)}/${ymd(e)}T${hms(e)}`], ['ctz', v.timezone]] as Params;
      })();
  const build = (t: Texts) => {
    const params: Params = [['action', 'TEMPLATE'], ['text', t.title], ...dates];
    if (t.location) params.push(['location', t.location]);
    if (v.recurrenceRule) params.push(['recur', `RRULE:${v.recurrenceRule}`]);
    if (v.busyType) params.push(['trp', v.busyType === 'busy' ? 'true' : 'false'], ['crm', v.busyType === 'busy' ? 'BUSY' : 'AVAILABLE']);
    if (t.description) params.push(['details', t.description]);
    return `https://calendar.google.com/calendar/render?${encode(params)}`;
  };
  return fitted(build, textsOf(v, false, words), words.more(v.pageUrl));
}

function microsoftUrl(base: string, v: EventView, words: LinkTexts): string {
  const dates: Params = v.isAllDay
    ? [
        ['startdt', isoDay(wallClock(v.startMs, 'UTC'))],
        ['enddt', isoDay(wallClock(v.endMs + DAY_MS, 'UTC'))],
        ['allday', 'true'],
      ]
    : [['startdt', utcIso(v.startMs)], ['enddt', utcIso(v.endMs)], ['allday', 'false']];
  const build = (t: Texts) => {
    const params: Params = [['path', '/calendar/action/compose'], ['rru', 'addevent'], ['subject', t.title], ...dates];
    if (t.location) params.push(['location', t.location]);
    // The body is read as HTML.
    if (t.description) params.push(['body', escapeHtml(t.description).replace(/\n/g, '<br>')]);
    return `${base}?${encode(params)}`;
  };
  return fitted(build, textsOf(v, true, words), words.more(v.pageUrl));
}

const outlookWebUrl = (v: EventView, words: LinkTexts = ENGLISH) => microsoftUrl('https://outlook.live.com/calendar/deeplink/compose', v, words);
const office365Url = (v: EventView, words: LinkTexts = ENGLISH) => microsoftUrl('https://outlook.cloud.microsoft/calendar/deeplink/compose', v, words);

/**
 * How Yahoo's add-event form reads a link. It has no official documentation; this follows
 * reports from people who tried the live form, the newest on 2026-08-19/20:
 * - https://github.com/spatie/calendar-links/issues/219 (2026-08-19): `ST`/`ET` are kept as
 *   the strings sent and shown as wall-clock time in the reader's calendar, a trailing `Z`
 *   ignored (`ST=20261231T193000Z` opened as 19:30 in UTC+2); there is no time-zone
 *   parameter. Older reports agree: https://github.com/InteractionDesignFoundation/
 *   add-event-to-calendar-docs/issues/29 (2021, re-tested 2026-08-19) and
 *   https://github.com/jshor/datebook/pull/153 (2021, "it completely ignores the trailing Z").
 * - https://github.com/spatie/calendar-links/issues/220 (2026-08-19): `DUR` is ignored when
 *   `ET` is present, so `ST`+`ET`+`DUR=allday` is never all-day; `ST=<date>&DUR=allday`
 *   alone is a one-day all-day event.
 * - https://github.com/spatie/calendar-links/issues/240 (2026-08-20): a date-only `ST`/`ET`
 *   pair opens with the all-day switch off, as a timed event from midnight on `ST` to
 *   midnight on `ET` (an exclusive end); no parameter makes a multi-day all-day event.
 * spatie/calendar-links 2.1.0 (2026-08-20) builds its Yahoo links this way. So: timed events
 * in the event's own wall time (right for readers whose calendar is in that zone, where UTC
 * is right only in UTC); one all-day day with `DUR=allday`; longer all-day events keep all
 * their days, midnight to midnight, without the all-day switch.
 */
function yahooUrl(v: EventView, words: LinkTexts = ENGLISH): string {
  const first = ymd(wallClock(v.startMs, 'UTC'));
  const afterLast = ymd(wallClock(v.endMs + DAY_MS, 'UTC'));
  const dates: Params = !v.isAllDay
    ? [['ST', localCompact(v.startMs, v.timezone)], ['ET', localCompact(v.endMs, v.timezone)]]
    : v.endMs <= v.startMs
      ? [['ST', first], ['DUR', 'allday']]
      : [['ST', first], ['ET', afterLast]];
  const build = (t: Texts) => {
    const params: Params = [['v', '60'], ['TITLE', t.title], ...dates];
    if (t.location) params.push(['in_loc', t.location]);
    if (t.description) params.push(['DESC', t.description]);
    return `https://calendar.yahoo.com/?${encode(params)}`;
  };
  return fitted(build, textsOf(v, true, words), words.more(v.pageUrl));
}

/** Where a calendar feed can be subscribed to, given its https address. */
export function subscribeUrls(feedUrl: string, name: string): Record<'apple' | 'google' | 'outlook_web' | 'office365', string> {
  const webcal = feedUrl.replace(/^https?:\/\//, 'webcal://');
  // The name is only a label for the subscription: cut to fit, like an event's title.
  const addFromWeb = (base: string) => {
    const build = (n: string) => `${base}?url=${encodeURIComponent(feedUrl)}&name=${encodeURIComponent(n)}`;
    const full = build(name);
    return full.length <= MAX_URL ? full : build(cutWithEllipsis(name, (n) => build(n).length <= MAX_URL) ?? '');
  };
  return {
    apple: webcal,
    google: `https://calendar.google.com/calendar/render?cid=${encodeURIComponent(webcal)}`,
    outlook_web: addFromWeb('https://outlook.live.com/calendar/0/addfromweb'),
    office365: addFromWeb('https://outlook.cloud.microsoft/calendar/0/addfromweb'),
  };
}

export type WebPlatform = 'google' | 'outlook_web' | 'office365' | 'yahoo';
export const WEB_PLATFORMS: Record<WebPlatform, (v: EventView, words?: LinkTexts) => string> = {
  google: googleUrl,
  outlook_web: outlookWebUrl,
  office365: office365Url,
  yahoo: yahooUrl,
};
