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
 * Every URL stays under MAX_URL: a long description is cut at a word with a link to the page.
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
    const words = recurrenceText(v.recurrenceRule);
    if (words) parts.push(`Repeats ${words}.`);
  }
  if (v.descriptionHtml) parts.push(htmlToText(v.descriptionHtml));
  if (v.locationUrl && v.locationUrl !== v.location) parts.push(v.locationUrl);
  return parts.join('\n\n');
}

/**
 * The URL with the description as long as the limit allows. When it does not fit, it is
 * cut at a word boundary and ends with a link back to the event page.
 */
function withDescription(base: string, params: Params, key: string, text: string, pageUrl: string, format: (t: string) => string = (t) => t): string {
  const build = (t: string) => (t ? `${base}?${encode([...params, [key, format(t)]])}` : `${base}?${encode(params)}`);
  const full = build(text);
  if (full.length <= MAX_URL) return full;
  const suffix = `…\n\nMore: ${pageUrl}`;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (build(text.slice(0, mid) + suffix).length <= MAX_URL) lo = mid;
    else hi = mid - 1;
  }
  let cut = text.slice(0, lo);
  const lastSpace = cut.search(/\s\S*$/);
  if (lastSpace > lo * 0.6) cut = cut.slice(0, lastSpace);
  const shortened = build(cut.trimEnd() + suffix);
  return shortened.length <= MAX_URL ? shortened : build('');
}

const locationOf = (v: EventView) => v.location ?? v.locationUrl ?? '';

export function googleUrl(v: EventView): string {
  const params: Params = [['action', 'TEMPLATE'], ['text', v.title]];
  if (v.isAllDay) {
    params.push(['dates', `${ymd(wallClock(v.startMs, 'UTC'))}/${ymd(wallClock(v.endMs + DAY_MS, 'UTC'))}`]);
  } else {
    const s = wallClock(v.startMs, v.timezone);
    const e = wallClock(v.endMs, v.timezone);
    params.push(['dates', `${ymd(s)}T${hms(s)}/${ymd(e)}T${hms(e)}`], ['ctz', v.timezone]);
  }
  if (locationOf(v)) params.push(['location', locationOf(v)]);
  if (v.recurrenceRule) params.push(['recur', `RRULE:${v.recurrenceRule}`]);
  if (v.busyType) params.push(['trp', v.busyType === 'busy' ? 'true' : 'false']);
  return withDescription('https://calendar.google.com/calendar/render', params, 'details', describe(v, false), v.pageUrl);
}

function microsoftUrl(base: string, v: EventView): string {
  const params: Params = [
    ['path', '/calendar/action/compose'],
    ['rru', 'addevent'],
    ['subject', v.title],
  ];
  if (v.isAllDay) {
    params.push(
      ['startdt', isoDay(wallClock(v.startMs, 'UTC'))],
      ['enddt', isoDay(wallClock(v.endMs + DAY_MS, 'UTC'))],
      ['allday', 'true'],
    );
  } else {
    params.push(['startdt', utcIso(v.startMs)], ['enddt', utcIso(v.endMs)], ['allday', 'false']);
  }
  if (locationOf(v)) params.push(['location', locationOf(v)]);
  return withDescription(base, params, 'body', describe(v, true), v.pageUrl, (t) => escapeHtml(t).replace(/\n/g, '<br>'));
}

export const outlookWebUrl = (v: EventView) => microsoftUrl('https://outlook.live.com/calendar/deeplink/compose', v);
export const office365Url = (v: EventView) => microsoftUrl('https://outlook.cloud.microsoft/calendar/deeplink/compose', v);

export function yahooUrl(v: EventView): string {
  const params: Params = [['v', '60'], ['TITLE', v.title]];
  if (v.isAllDay) {
    params.push(['ST', ymd(wallClock(v.startMs, 'UTC'))], ['ET', ymd(wallClock(v.endMs, 'UTC'))], ['DUR', 'allday']);
  } else {
    params.push(['ST', utcCompact(v.startMs)], ['ET', utcCompact(v.endMs)]);
  }
  if (locationOf(v)) params.push(['in_loc', locationOf(v)]);
  return withDescription('https://calendar.yahoo.com/', params, 'DESC', describe(v, true), v.pageUrl);
}

/** Where a calendar feed can be subscribed to, given its https address. */
export function subscribeUrls(feedUrl: string, name: string): Record<'apple' | 'google' | 'outlook_web' | 'office365', string> {
  const webcal = feedUrl.replace(/^https?:\/\//, 'webcal://');
  const query = `url=${encodeURIComponent(feedUrl)}&name=${encodeURIComponent(name)}`;
  return {
    apple: webcal,
    google: `https://calendar.google.com/calendar/render?cid=${encodeURIComponent(webcal)}`,
    outlook_web: `https://outlook.live.com/calendar/0/addfromweb?${query}`,
    office365: `https://outlook.cloud.microsoft/calendar/0/addfromweb?${query}`,
  };
}

export type WebPlatform = 'google' | 'outlook_web' | 'office365' | 'yahoo';
export const WEB_PLATFORMS: Record<WebPlatform, (v: EventView) => string> = {
  google: googleUrl,
  outlook_web: outlookWebUrl,
  office365: office365Url,
  yahoo: yahooUrl,
};
