import type { EventView } from './event-view';
import { escapeHtml, htmlToText } from './html';
import { recurrenceText } from './recurrence';
import { type WallClock, wallClock } from './time-zones';

/**
 * Add-event URLs of the web calendars, as they accept them today:
 * - Google: `calendar/render?action=TEMPLATE`; timed events in local wall time with `ctz`,
 *   all-day as `YYYYMMDD/YYYYMMDD` with an exclusive end and no `ctz`; RRULE in `recur`.
 * - Outlook.com and Office 365 deep links (`outlook.live.com`, `outlook.cloud.microsoft`):
 *   times in UTC with `Z`; all-day as dates with `allday=true` and an exclusive end; the
 *   body is read as HTML, so line breaks become <br>.
 * - Yahoo: `v=60` with upper-case `TITLE`/`ST`/`ET`/`DESC`; UTC times; all-day as dates
 *   with `DUR=allday` (its form takes the last day itself as the end).
 * Only Google repeats events from a link; the others get the rule in words in the body.
 * Every URL stays under MAX_URL: a long description is cut at a word with a link to the
 * page; when that alone is not enough, the location and then the title are cut too.
 */
export const MAX_URL = 2000;

const pad = (n: number) => String(n).padStart(2, '0');
const ymd = (w: WallClock) => `${w.year}${pad(w.month)}${pad(w.day)}`;
const hms = (w: WallClock) => `${pad(w.hour)}${pad(w.minute)}${pad(w.second)}`;
const isoDay = (w: WallClock) => `${w.year}-${pad(w.month)}-${pad(w.day)}`;
const utcCompact = (ms: number) => {
  const w = wallClock(ms, 'UTC');
  return `${ymd(w)}T${hms(w)}Z`;
};
const utcIso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const DAY_MS = 86_400_000;

type Params = Array<[string, string]>;

const encode = (params: Params) => params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');

function describe(v: EventView, withRecurrenceNote: boolean): string {
  const parts: string[] = [];
  if (withRecurrenceNote && v.recurrenceRule) {
    const words = recurrenceText(v.recurrenceRule, v.timezone);
    if (words) parts.push(`Repeats ${words}.`);
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

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * The longest prefix of `text` that `fits`, ending between two characters as people see them
 * (never inside a surrogate pair, which encodeURIComponent refuses, nor inside an emoji
 * sequence or before a combining mark); null when not even the empty prefix fits.
 */
function longestFitting(text: string, fits: (prefix: string) => boolean): string | null {
  const ends = [0];
  // No more than MAX_URL units of text fit in a URL: the rest need not be segmented (a
  // boundary the slice makes is never chosen, as that much never fits).
  for (const { index, segment } of graphemes.segment(text.slice(0, MAX_URL))) ends.push(index + segment.length);
  if (!fits('')) return null;
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
  const kept = longestFitting(text, (prefix) => fits(`${prefix}…`))?.trimEnd();
  return kept ? `${kept}…` : null;
}

/**
 * The URL with every text whole when it fits in MAX_URL. Otherwise, in this order until it
 * fits: the description is cut at a word and ends with a link back to the event page; the
 * description becomes that link alone; the location is cut (or left out); the title is cut.
 */
function fitted(build: (t: Texts) => string, texts: Texts, pageUrl: string): string {
  const full = build(texts);
  if (full.length <= MAX_URL) return full;
  const fits = (t: Texts) => build(t).length <= MAX_URL;
  const more = `More: ${pageUrl}`;
  const suffix = `…\n\n${more}`;
  let cut = longestFitting(texts.description, (prefix) => fits({ ...texts, description: prefix + suffix }));
  if (cut) {
    const lastSpace = cut.search(/\s\S*$/);
    if (lastSpace > cut.length * 0.6) cut = cut.slice(0, lastSpace);
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

const textsOf = (v: EventView, withRecurrenceNote: boolean): Texts => ({
  title: v.title,
  location: v.location ?? v.locationUrl ?? '',
  description: describe(v, withRecurrenceNote),
});

export function googleUrl(v: EventView): string {
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
    if (v.busyType) params.push(['trp', v.busyType === 'busy' ? 'true' : 'false']);
    if (t.description) params.push(['details', t.description]);
    return `https://calendar.google.com/calendar/render?${encode(params)}`;
  };
  return fitted(build, textsOf(v, false), v.pageUrl);
}

function microsoftUrl(base: string, v: EventView): string {
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
  return fitted(build, textsOf(v, true), v.pageUrl);
}

export const outlookWebUrl = (v: EventView) => microsoftUrl('https://outlook.live.com/calendar/deeplink/compose', v);
export const office365Url = (v: EventView) => microsoftUrl('https://outlook.cloud.microsoft/calendar/deeplink/compose', v);

export function yahooUrl(v: EventView): string {
  const dates: Params = v.isAllDay
    ? [['ST', ymd(wallClock(v.startMs, 'UTC'))], ['ET', ymd(wallClock(v.endMs, 'UTC'))], ['DUR', 'allday']]
    : [['ST', utcCompact(v.startMs)], ['ET', utcCompact(v.endMs)]];
  const build = (t: Texts) => {
    const params: Params = [['v', '60'], ['TITLE', t.title], ...dates];
    if (t.location) params.push(['in_loc', t.location]);
    if (t.description) params.push(['DESC', t.description]);
    return `https://calendar.yahoo.com/?${encode(params)}`;
  };
  return fitted(build, textsOf(v, true), v.pageUrl);
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
export const WEB_PLATFORMS: Record<WebPlatform, (v: EventView) => string> = {
  google: googleUrl,
  outlook_web: outlookWebUrl,
  office365: office365Url,
  yahoo: yahooUrl,
};
