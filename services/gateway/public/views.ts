import { createHash } from 'node:crypto';
import { subscribeUrls } from '../calendar/platform-urls';
import { htmlToText } from '../../../shared/calendar/html';
import { offsetString, zoneOffsetMinutes } from '../../../shared/calendar/time-zones';
import { intlDateRange } from '../../../shared/i18n/dates';
import type { PlatformKey } from '../../../shared/calendar/platforms';
import { html, safe, type SafeHtml } from './html';
import { addToCalendar, ICON_SPRITE, icon, linkAttrs } from './add-to-calendar';
import { type Locale, type MessageKey, type Translate, translator } from './i18n';
import { localRecurrenceText } from '../../../shared/i18n/recurrence';

/**
 * The public pages: plain server-rendered HTML with inline styles and nothing loaded from
 * elsewhere; everything works without JavaScript. Two small fixed scripts improve on that
 * (the visitor's local time, an embed's height for its parent), allowed by their hashes
 * alone. Every value a user wrote is escaped by `html`; descriptions are stored sanitized
 * and go in as they are.
 */

/**
 * The event page: when the visitor's time zone shows the event at other wall-clock times,
 * it says so under the event's own time (all-day events are dates everywhere: not shown).
 */
const LOCAL_TIME_SCRIPT =
  "(function(){var p=document.getElementById('local-time');if(!p||!window.Intl)return;var d=p.dataset,s=new Date(+d.start),e=new Date(+d.end);" +
  "function f(z,n){var o={weekday:'short',month:'short',day:'numeric',year:'numeric',hour:'numeric',minute:'2-digit'};if(z)o.timeZone=z;if(n)o.timeZoneName='short';" +
  "var t=new Intl.DateTimeFormat(document.documentElement.lang,o);return t.formatRange?t.formatRange(s,e):t.format(s)+' \u2013 '+t.format(e)}" +
  "try{if(f(d.zone)===f())return;p.querySelector('span').textContent=f(null,1);p.hidden=false}catch(x){}})();";

/** The message an embed posts to its parent with its height (the loader snippet listens for it). */
export const EMBED_HEIGHT_MESSAGE = 'calendar-service:embed-height';

/** Embeds: tell the parent page our height, so its loader snippet can size the iframe to it. */
const EMBED_HEIGHT_SCRIPT =
  "(function(){if(window.parent===window)return;var l=0;function s(){var h=Math.ceil(document.body.getBoundingClientRect().height);" +
  `if(h!==l){l=h;window.parent.postMessage({type:'${EMBED_HEIGHT_MESSAGE}',height:h},'*')}}` +
  "addEventListener('load',s);addEventListener('resize',s);document.addEventListener('toggle',s,true);if(window.ResizeObserver)new ResizeObserver(s).observe(document.body);s()})();";

/** Every script a page may hold (and the CSP allows, by hash). */
export const PAGE_SCRIPTS = [LOCAL_TIME_SCRIPT, EMBED_HEIGHT_SCRIPT];

const scriptHash = (source: string) => `'sha256-${createHash('sha256').update(source).digest('base64')}'`;
const SCRIPT_SRC = PAGE_SCRIPTS.map(scriptHash).join(' ');

/** The favicon: a calendar drawn inline, so no request is made for it. */
export const FAVICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="3" y="5" width="26" height="24" rx="4" fill="#1f883d"/><rect x="3" y="5" width="26" height="7" rx="3" fill="#116329"/><path d="M10 2v6M22 2v6" stroke="#1f2328" stroke-width="3" stroke-linecap="round"/><path d="M10 20l4 4 8-8" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>',
)}`;

/**
 * Where a form of ours may lead: this service, and the platforms the subscribe button's POST
 * redirects to (a browser applies form-action to the redirect too, and would stop there).
 */
const FORM_TARGETS = [
  "'self'",
  ...new Set(
    Object.values(subscribeUrls('https://feed.invalid/c.ics', 'c')).map((url) => {
      const target = new URL(url);
      return target.protocol === 'https:' ? target.origin : target.protocol;
    }),
  ),
].join(' ');

/**
 * The Content-Security-Policy of every page above (and of error pages): no script runs but
 * the two fixed ones above (by their hashes: never one a value could inject, even if escaping
 * ever failed) and nothing loads from elsewhere; only the embed widgets may be framed.
 */
const PAGE_CSP = `default-src 'none'; script-src ${SCRIPT_SRC}; style-src 'unsafe-inline'; img-src data:; form-action ${FORM_TARGETS}; base-uri 'none'`;
export const pageCsp = (opts: { frameable?: boolean } = {}) => `${PAGE_CSP}; frame-ancestors ${opts.frameable ? '*' : "'none'"}`;

const STYLE = `
*{box-sizing:border-box}
body{margin:0;background:#f6f8fa;color:#1f2328;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:40rem;margin:0 auto;padding:1rem}
.card{background:#fff;border:1px solid #d0d7de;border-radius:12px;padding:1.25rem 1.25rem 1rem;margin:0 0 1rem}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .5rem;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:0 0 .25rem;overflow-wrap:anywhere}
.meta{margin:.25rem 0;color:#424a53}
.meta b{color:#1f2328;font-weight:600}
.description{margin:1rem 0;overflow-wrap:anywhere}
.description p{margin:.5rem 0}
.buttons{display:flex;flex-wrap:wrap;gap:.5rem;margin:1rem 0 .25rem;padding:0;list-style:none}
.buttons a{display:inline-block;padding:.55rem .9rem;border:1px solid #d0d7de;border-radius:8px;background:#fff;color:#0969da;text-decoration:none;font-weight:600;font-size:.95rem}
.buttons a:hover,.buttons a:focus{background:#f3f4f6;border-color:#0969da}
.buttons.small a{padding:.3rem .6rem;font-size:.85rem;font-weight:500}
a{color:#0969da}
form{display:flex;flex-wrap:wrap;gap:.5rem;margin-top:1rem}
input[type=password],input[type=text],input[type=email]{flex:1 1 12rem;padding:.55rem .7rem;border:1px solid #d0d7de;border-radius:8px;font:inherit}
button{padding:.55rem 1rem;border:0;border-radius:8px;background:#1f883d;color:#fff;font:inherit;font-weight:600;cursor:pointer}
button.secondary{background:#fff;color:#1f2328;border:1px solid #d0d7de}
button:disabled{opacity:.45;cursor:not-allowed;text-decoration:line-through}
.error{color:#cf222e}
.muted{color:#656d76;font-size:.9rem}
ul.events{list-style:none;margin:0;padding:0}
ul.events>li{border-top:1px solid #d8dee4;padding:.75rem 0}
p,li{overflow-wrap:anywhere}
code{font:.9em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f3f4f6;border-radius:4px;padding:.1em .3em;overflow-wrap:anywhere}
.ok{color:#1a7f37}
pre{background:#f3f4f6;border-radius:8px;padding:.6rem .8rem;overflow-x:auto;margin:.4rem 0 .8rem}
pre code{background:none;padding:0;overflow-wrap:normal}
:focus-visible{outline:3px solid #0969da;outline-offset:2px}
.icon{width:1.25rem;height:1.25rem;flex:none}
.atc{margin:1rem 0 .5rem}
.atc>summary{display:inline-flex;align-items:center;gap:.5rem;min-height:2.75rem;padding:.55rem 1.1rem;border-radius:8px;background:#0969da;color:#fff;font-weight:600;cursor:pointer;list-style:none;user-select:none}
.atc>summary::-webkit-details-marker{display:none}
.atc>summary::after{content:"";width:.45rem;height:.45rem;margin:0 .1rem 0 .2rem;border:solid currentColor;border-width:0 2px 2px 0;transform:translateY(-25%) rotate(45deg)}
.atc[open]>summary::after{transform:translateY(25%) rotate(-135deg)}
.atc>summary:hover{background:#0860ca}
.atc-list{list-style:none;margin:.5rem 0 0;padding:.25rem;border:1px solid #d0d7de;border-radius:10px;background:#fff;max-width:22rem}
.atc-list a{display:flex;align-items:center;gap:.65rem;padding:.5rem .6rem;border-radius:6px;color:#1f2328;text-decoration:none;font-weight:600;line-height:1.25}
.atc-list a:hover,.atc-list a:focus{background:#f3f4f6}
.atc-list small{display:block;color:#59636e;font-weight:400;font-size:.8rem}
.updates{display:inline-flex;align-items:center;gap:.35rem;font-size:.95rem}
.fold>summary{cursor:pointer;color:#0969da;font-weight:600}
.preview:has(+.fold[open]){display:none}
ul.events h3{font-size:1.1rem;margin:0 0 .25rem;overflow-wrap:anywhere}
ul.events .atc{margin:.5rem 0 .25rem}
ul.events .atc>summary{min-height:2.5rem;padding:.35rem .9rem;background:#fff;color:#0969da;border:1px solid #0969da}
ul.events .atc>summary:hover{background:#f3f8ff}
.month{font-size:1rem;margin:1.25rem 0 0;padding-bottom:.25rem;border-bottom:2px solid #d0d7de;color:#424a53}
.pages{display:flex;justify-content:space-between;gap:1rem;margin-top:1rem}
body.embed{background:transparent;font-size:14px;line-height:1.4}
.embed main{max-width:none;padding:0}
.embed .card{background:transparent;border:0;border-radius:0;padding:0;margin:0}
.embed h2,.embed h3{font-size:1rem;margin:0 0 .15rem;display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden}
.embed .meta{margin:0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.embed .atc{margin:.4rem 0 .2rem}
.embed .atc>summary{min-height:2.5rem;padding:.4rem .9rem}
.embed ul.events>li{padding:.4rem 0}
.embed ul.events>li:first-child{border-top:0}
`;

/** The favicon's link, escaped once. */
const FAVICON_LINK = html`<link rel="icon" href="${FAVICON}">`;

interface PageOptions {
  title: string;
  description?: string;
  imageUrl?: string | null;
  canonicalUrl?: string;
  /** Open Graph type (`website` by default). */
  ogType?: string;
  /** More of the head: structured data. */
  head?: SafeHtml;
  /** The icons the page's Add-to-calendar controls use. */
  icons?: boolean;
  /** An embed: transparent, no margins, and it tells its parent its height. */
  embed?: boolean;
  /** A script of ours (one of the hashed ones above) at the end of the body. */
  script?: string;
  /** The page's language (English by default). */
  lang?: Locale;
}

function layout(opts: PageOptions, body: SafeHtml): string {
  const description = opts.description ? opts.description : undefined;
  return html`<!doctype html>
<html lang="${opts.lang ?? 'en'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title}</title>
${FAVICON_LINK}
${description ? html`<meta name="description" content="${description}">` : ''}
<meta property="og:type" content="${opts.ogType ?? 'website'}">
<meta property="og:title" content="${opts.title}">
${description ? html`<meta property="og:description" content="${description}">` : ''}
${opts.canonicalUrl ? html`<meta property="og:url" content="${opts.canonicalUrl}">` : ''}
${opts.imageUrl ? html`<meta property="og:image" content="${opts.imageUrl}">` : ''}
<meta name="twitter:card" content="${opts.imageUrl ? 'summary_large_image' : 'summary'}">
<meta name="twitter:title" content="${opts.title}">
${description ? html`<meta name="twitter:description" content="${description}">` : ''}
${opts.canonicalUrl ? html`<link rel="canonical" href="${opts.canonicalUrl}">` : ''}
${opts.head ?? ''}
<style>${safe(STYLE)}</style>
</head>
<body${opts.embed ? safe(' class="embed"') : ''}>
${opts.icons ? ICON_SPRITE : ''}
<main>
${body}
</main>
${opts.script ? safe(`<script>${opts.script}</script>`) : ''}
</body>
</html>
`.value;
}

/**
 * JSON for a <script> data block: `<`, `>` and `&` (and the line separators JavaScript
 * once refused) as \u escapes, so no value can close the element or open a comment.
 */
const scriptJson = (value: unknown) =>
  safe(JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));

/** What a page shows of an event, already formatted. */
export interface EventCard {
  title: string;
  when: string;
  zone: string | null;
  /** In English; the pages of other languages read `rule` in theirs. */
  repeats: string | null;
  /** The recurrence rule, as the API has it. */
  rule: string | null;
  location: string | null;
  locationUrl: string | null;
  descriptionHtml: string | null;
  /** Platform key → address, carrying a signature when the page was opened with one. */
  links: Record<string, string>;
  pageUrl: string;
  startMs: number;
  endMs: number;
  isAllDay: boolean;
  timezone: string;
}

const isUrl = (value: string) => /^https?:\/\/\S+$/i.test(value.trim());

function where(card: EventCard, t: Translate): SafeHtml | string {
  const text = card.location ?? '';
  const url = card.locationUrl ?? (isUrl(text) ? text.trim() : null);
  if (!text && !url) return '';
  const label = text || url;
  const shown = url ? html`<a href="${url}" rel="nofollow noopener noreferrer" target="_blank">${label}</a>` : label;
  // Locations may hold line breaks: keep them.
  const withBreaks = typeof shown === 'string' ? safe(html`${shown}`.value.replace(/\n/g, '<br>')) : shown;
  return html`<p class="meta"><b>${t('where')}</b> ${withBreaks}</p>`;
}

/**
 * The event's heading: on its own page a title, in lists and widgets a link to the page
 * (`links.event_page`, which carries the signed pair when the widget was opened with one).
 */
/** When the event is, in the page's language: English as everywhere else; other languages by Intl. */
function whenIn(card: EventCard, locale: Locale, t: Translate): string {
  return locale === 'en' ? card.when : intlDateRange(locale, card, { allDay: t('all_day'), zoneName: true });
}

/** When the event is, as the pages of `locale` write it. */
export const cardWhen = (card: EventCard, locale: Locale): string => whenIn(card, locale, translator(locale));

function eventDetails(card: EventCard, headingLevel: 1 | 2 | 3, opts: { target?: string; zone?: boolean; localTime?: boolean; locale?: Locale } = {}): SafeHtml {
  const locale = opts.locale ?? 'en';
  const t = translator(locale);
  const heading =
    headingLevel === 1
      ? html`<h1>${card.title}</h1>`
      : safe(`<h${headingLevel}>${html`<a href="${card.links.event_page ?? card.pageUrl}"${linkAttrs(opts.target, [])}>${card.title}</a>`.value}</h${headingLevel}>`);
  const zone = card.zone && opts.zone !== false ? html` <span class="muted">(${card.zone})</span>` : '';
  const repeats = locale === 'en' || !card.rule ? card.repeats : localRecurrenceText(card.rule, card.timezone, locale);
  // Filled in, and shown, by LOCAL_TIME_SCRIPT when the visitor's clock differs.
  const local =
    opts.localTime && !card.isAllDay
      ? html`<p class="meta" id="local-time" hidden data-start="${card.startMs}" data-end="${card.endMs}" data-zone="${card.timezone}"><b>${t('your_time')}</b> <span></span></p>`
      : '';
  return html`${heading}
<p class="meta"><b>${t('when')}</b> ${whenIn(card, locale, t)}${zone}</p>
${local}
${repeats ? html`<p class="meta"><b>${t('repeats')}</b> ${repeats}</p>` : ''}
${where(card, t)}`;
}

/**
 * A description as text (for folding, previews and structured data), remembered: turning
 * HTML into text costs more than the rest of a page, and pages show the same few events
 * over and over.
 */
const texts = new Map<string, string>();
const TEXTS_MAX = 1000;
function textOf(descriptionHtml: string): string {
  let text = texts.get(descriptionHtml);
  if (text === undefined) {
    text = htmlToText(descriptionHtml).trim();
    if (texts.size >= TEXTS_MAX) texts.clear();
    texts.set(descriptionHtml, text);
  }
  return text;
}

/** One month-and-year formatter per zone, made once (making one costs tens of microseconds). */
const monthFormatters = new Map<string, Intl.DateTimeFormat>();
function monthFormatter(locale: Locale, zone: string): Intl.DateTimeFormat {
  const key = `${locale} ${zone}`;
  let formatter = monthFormatters.get(key);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat(locale === 'en' ? 'en-US' : locale, { month: 'long', year: 'numeric', timeZone: zone });
    monthFormatters.set(key, formatter);
  }
  return formatter;
}

/** A description longer than this (as text) starts folded: its beginning, and the whole a click away. */
const FOLD_CHARS = 320;
const PREVIEW_CHARS = 220;

/** The event's description, folded when long (a native <details>: no script needed). */
function description(descriptionHtml: string | null, t: Translate): SafeHtml | '' {
  if (!descriptionHtml) return '';
  const text = textOf(descriptionHtml);
  if (text.length <= FOLD_CHARS) return html`<div class="description">${safe(descriptionHtml)}</div>`;
  const cut = text.slice(0, PREVIEW_CHARS);
  const lastSpace = cut.lastIndexOf(' ');
  const preview = `${(lastSpace > PREVIEW_CHARS / 2 ? cut.slice(0, lastSpace) : cut).trimEnd()}…`;
  return html`<p class="description preview">${preview}</p>
<details class="fold"><summary>${t('read_full_description')}</summary><div class="description">${safe(descriptionHtml)}</div></details>`;
}

/** ISO 8601 for structured data: local time with its offset, or the date of an all-day event. */
function isoIn(ms: number, zone: string, allDay: boolean): string {
  if (allDay) return new Date(ms).toISOString().slice(0, 10);
  const offset = zoneOffsetMinutes(zone, ms);
  return `${new Date(Math.floor(ms / 1000) * 1000 + offset * 60_000).toISOString().slice(0, 19)}${offsetString(offset)}`;
}

/** schema.org Event for search engines and link previews. */
function eventJsonLd(card: EventCard, text: string | undefined, imageUrl: string | null | undefined): SafeHtml {
  const url = card.locationUrl ?? (card.location && isUrl(card.location) ? card.location.trim() : null);
  const online = !!url && (!card.location || isUrl(card.location));
  const data = {
    '@context': 'https://schema.org',
    '@type': 'Event',
    name: card.title,
    startDate: isoIn(card.startMs, card.timezone, card.isAllDay),
    // All-day events end on their (inclusive) last day.
    endDate: isoIn(card.endMs, card.timezone, card.isAllDay),
    eventStatus: 'https://schema.org/EventScheduled',
    eventAttendanceMode: `https://schema.org/${online ? 'Online' : 'Offline'}EventAttendanceMode`,
    ...(online ? { location: { '@type': 'VirtualLocation', url } } : card.location ? { location: { '@type': 'Place', name: card.location, address: card.location } } : {}),
    ...(text ? { description: text } : {}),
    ...(imageUrl ? { image: [imageUrl] } : {}),
    url: card.pageUrl,
  };
  return html`<script type="application/ld+json">${scriptJson(data)}</script>`;
}

/** The RSVP part of an event page. */
interface RsvpBox {
  action: string;
  counts: { yes: number; maybe: number; no: number };
  limit: number | null;
  notice?: RsvpNotice;
  /** The answer this browser gave (it holds the answer's key): shown, and the form starts from it. */
  yours?: { name: string; email: string; answer: 'yes' | 'maybe' | 'no' };
  /** An answer that was refused: the form shows what was typed, each problem beside its field. */
  refused?: RsvpForm;
}

/** What a visitor sent in the RSVP form, and what was wrong with it, by field (`form` for the whole answer). */
export interface RsvpForm {
  entered: { name?: string; email?: string; answer?: string };
  errors: Record<string, string[]>;
}

const ANSWER_LABEL = { yes: 'rsvp_yes', maybe: 'rsvp_maybe', no: 'rsvp_no' } as const;

/** A text with one value in bold where its catalog puts it (`\u0000` marks the place): word order is the language's. */
const withBold = (text: string, value: string) => {
  const [before, after = ''] = text.split('\u0000');
  return html`${before}<b>${value}</b>${after}`;
};

/** A field's problems, said beside it and tied to it for screen readers. */
const fieldErrors = (id: string, messages: string[] | undefined) =>
  messages?.length ? html`<p class="error" id="${id}-error" style="flex-basis:100%;margin:0">${messages.join(' ')}</p>` : '';
const invalid = (id: string, messages: string[] | undefined) => (messages?.length ? html` aria-invalid="true" aria-describedby="${id}-error"` : '');

/**
 * What the page says after an answer: `thanks`, saved (it came with its key, which this
 * browser keeps); `received`, an answer without the key, which says the same whether or not
 * the address had answered: a link to change it is on its way to the address.
 */
export type RsvpNotice = 'thanks' | 'received';
export const rsvpNotice = (value: unknown): RsvpNotice | undefined => (value === 'thanks' || value === 'received' ? value : undefined);

function rsvpSection(box: RsvpBox, t: Translate): SafeHtml {
  const full = box.limit !== null && box.counts.yes >= box.limit;
  const places = box.limit === null ? '' : ` · ${full ? t('rsvp_no_places') : t('rsvp_places_left', { left: box.limit - box.counts.yes, limit: box.limit })}`;
  const label = { yes: t('rsvp_yes'), maybe: t('rsvp_maybe'), no: t('rsvp_no') };
  const { yours, refused } = box;
  const errors = refused?.errors ?? {};
  // What the form starts from: what was just typed (refused), else this browser's answer.
  const name = refused ? (refused.entered.name ?? '') : yours?.name;
  const email = refused ? (refused.entered.email ?? '') : yours?.email;
  const enteredAnswer = refused?.entered.answer;
  const given = enteredAnswer === 'yes' || enteredAnswer === 'maybe' || enteredAnswer === 'no' ? enteredAnswer : undefined;
  // Someone whose yes holds a place keeps it selectable when the event is full.
  const checked = given ?? yours?.answer ?? (full ? 'maybe' : 'yes');
  const yesDisabled = full && yours?.answer !== 'yes';
  const radio = (answer: 'yes' | 'maybe' | 'no') =>
    html`<label><input type="radio" name="answer" value="${answer}"${answer === 'yes' && yesDisabled ? safe(' disabled') : answer === checked ? safe(' checked') : ''}> ${label[answer]}</label>`;
  const value = (v: string | undefined) => (v === undefined ? '' : html` value="${v}"`);
  return html`<section class="card" aria-labelledby="rsvp-title">
<h2 id="rsvp-title">${t('rsvp_title')}</h2>
<p class="meta">${t('rsvp_counts', { yes: box.counts.yes, maybe: box.counts.maybe })}${places}</p>
${box.notice === 'thanks' ? html`<p role="status"><b>${t('rsvp_thanks_title')}</b> ${t('rsvp_thanks_text')}</p>` : ''}
${box.notice === 'received' ? html`<p role="status"><b>${t('rsvp_received_title')}</b> ${t('rsvp_received_text')}</p>` : ''}
${refused ? html`<p class="error" role="alert"><b>${t('rsvp_not_saved')}</b> ${errors.form?.length ? errors.form.join(' ') : t('rsvp_correct_below')}</p>` : ''}
${yours && !refused ? html`<p>${t('rsvp_your_answer')} <b>${label[yours.answer]}</b> (${yours.name}, ${yours.email}). ${t('rsvp_can_change')}</p>` : ''}
${yesDisabled ? html`<p class="error">${t('rsvp_full')}</p>` : ''}
<form method="post" action="${box.action}">
<label for="rsvp-name" class="muted" style="flex-basis:100%">${t('rsvp_name')}</label>
<input type="text" id="rsvp-name" name="name" required maxlength="255" autocomplete="name"${value(name)}${invalid('rsvp-name', errors.name)}>
${fieldErrors('rsvp-name', errors.name)}
<label for="rsvp-email" class="muted" style="flex-basis:100%">${t('rsvp_email')}</label>
<input type="email" id="rsvp-email" name="email" required maxlength="255" autocomplete="email"${value(email)}${invalid('rsvp-email', errors.email)}>
${fieldErrors('rsvp-email', errors.email)}
<fieldset style="flex-basis:100%;border:0;padding:0;margin:.25rem 0;display:flex;flex-wrap:wrap;gap:1rem"${invalid('rsvp-answer', errors.answer)}>
<legend class="muted">${t('rsvp_answer')}</legend>
${radio('yes')}
${radio('maybe')}
${radio('no')}
${fieldErrors('rsvp-answer', errors.answer)}
</fieldset>
<button type="submit">${t('rsvp_send')}</button>
</form>
</section>`;
}

/** Text for previews and structured data: the description's words, cut at a word. */
function summaryText(card: EventCard, when: string): string {
  const text = card.descriptionHtml ? textOf(card.descriptionHtml).replace(/\s+/g, ' ') : '';
  const place = card.location ? ` · ${card.location.replace(/\s+/g, ' ').trim()}` : '';
  const lead = `${when}${place}`;
  if (!text) return lead;
  const room = 300;
  if (text.length <= room) return `${lead}. ${text}`;
  const cut = text.slice(0, room);
  return `${lead}. ${cut.slice(0, Math.max(cut.lastIndexOf(' '), room / 2))}…`;
}

interface EventPageExtra {
  imageUrl?: string | null;
  rsvp?: RsvpBox;
  /** The visitor's likely platform (from the User-Agent), listed first. */
  first?: PlatformKey | null;
  /** The event's own feed (webcal://), for "Get updates"; none for a protected event. */
  updatesUrl?: string | null;
  locale?: Locale;
}

export function eventPage(card: EventCard, extra: EventPageExtra = {}): string {
  const locale = extra.locale ?? 'en';
  const t = translator(locale);
  const text = summaryText(card, whenIn(card, locale, t));
  return layout(
    {
      title: card.title,
      description: text,
      imageUrl: extra.imageUrl,
      canonicalUrl: card.pageUrl,
      ogType: 'event',
      head: eventJsonLd(card, card.descriptionHtml ? textOf(card.descriptionHtml) : undefined, extra.imageUrl),
      icons: true,
      script: card.isAllDay ? undefined : LOCAL_TIME_SCRIPT,
      lang: locale,
    },
    html`<article class="card">
${eventDetails(card, 1, { localTime: true, locale })}
${addToCalendar(card.links, { first: extra.first, t })}
${extra.updatesUrl ? html`<p class="muted"><a class="updates" href="${extra.updatesUrl}" rel="nofollow">${icon('updates')}${t('get_updates')}</a><br>${t('get_updates_hint')}</p>` : ''}
${description(card.descriptionHtml, t)}
</article>
${extra.rsvp ? rsvpSection(extra.rsvp, t) : ''}`,
  );
}

/** A compact widget for an iframe: links open outside the frame. */
export function embedPage(card: EventCard, first?: PlatformKey | null, locale: Locale = 'en'): string {
  return layout(
    { title: card.title, icons: true, embed: true, script: EMBED_HEIGHT_SCRIPT, lang: locale },
    html`<article class="card">${eventDetails(card, 2, { target: '_blank', zone: false, locale })}${addToCalendar(card.links, { first, target: '_blank', t: translator(locale) })}</article>`,
  );
}

/** What a refused access code is told, beside the form. */
export type LockProblem = 'lock_wrong_code' | 'lock_too_many' | 'field_access_code';

export function lockedPage(locale: Locale, uid: string, problem?: LockProblem): string {
  const t = translator(locale);
  return layout(
    { title: t('page_protected'), lang: locale },
    html`<article class="card">
<h1>${t('lock_title')}</h1>
<p>${t('lock_text')}</p>
${problem ? html`<p class="error" role="alert">${t(problem)}</p>` : ''}
<form method="post" action="/e/${uid}/unlock">
<label for="access_code" class="muted" style="flex-basis:100%">${t('lock_code')}</label>
<input type="password" id="access_code" name="access_code" required minlength="4" maxlength="64" autocomplete="off">
<button type="submit">${t('lock_open')}</button>
</form>
</article>`,
  );
}

/**
 * An error as a page. `message` is the page's own text when the thrower wrote one for
 * people (in their language); otherwise the status says it: a 404 is "not found", a 5xx
 * "something went wrong", and a 4xx shows the error's message (the API's words, in English,
 * with each field's problem when there are several).
 */
export function errorPage(locale: Locale, status: number, message: string, fieldErrors?: Record<string, string[]>): string {
  const t = translator(locale);
  const title = t(status >= 500 ? 'error_title_server' : status === 404 ? 'error_title_not_found' : 'error_title_other');
  const list = fieldErrors ? Object.values(fieldErrors).flat() : [];
  return layout(
    { title, lang: locale },
    html`<article class="card"><h1>${title}</h1>${
      list.length > 1 ? html`<ul class="error">${list.map((m) => html`<li>${m}</li>`)}</ul>` : html`<p class="error">${message}</p>`
    }</article>`,
  );
}

export function messagePage(locale: Locale, title: MessageKey, message: MessageKey): string {
  const t = translator(locale);
  return layout({ title: t(title), lang: locale }, html`<article class="card"><h1>${t(title)}</h1><p>${t(message)}</p></article>`);
}

/** A page whose texts are not the visitor's to choose (the dashboard's, the service's own): English. */
export function englishPage(title: string, message: string): string {
  return layout({ title }, html`<article class="card"><h1>${title}</h1><p>${message}</p></article>`);
}

/**
 * The problems of a public form's fields, in the page's language: one sentence per field
 * that says what it needs (the API's JSON answer keeps its own, more detailed messages).
 */
const FIELD_PROBLEM: Record<string, MessageKey> = { name: 'field_name', email: 'field_email', answer: 'field_answer', access_code: 'field_access_code' };
export function formProblems(locale: Locale, fieldErrors: Record<string, string[]>): Record<string, string[]> {
  const t = translator(locale);
  return Object.fromEntries(Object.keys(fieldErrors).map((field) => [field, [t(FIELD_PROBLEM[field] ?? 'field_invalid')]]));
}

/** The form a calendar that asks who subscribes shows before sending people on. */
/**
 * The subscribe page: a button that subscribes (a POST: opening the address, as a link
 * preview or a mail scanner does, records nothing), with name and email fields when the
 * calendar asks for them.
 */
export function subscribeDetailsPage(
  locale: Locale,
  calendarName: string,
  action: string,
  problems: Record<string, string[]> = {},
  values: { name?: string; email?: string } = {},
  askDetails = true,
): string {
  const t = translator(locale);
  const errors = Object.entries(problems);
  return layout(
    { title: t('sub_title', { name: calendarName }), lang: locale },
    html`<article class="card">
<h1>${t('sub_title', { name: calendarName })}</h1>
<p>${askDetails ? t('sub_ask_text') : t('sub_text')}</p>
${errors.length ? html`<ul class="error" role="alert">${errors.map(([field, messages]) => html`<li id="${field}-error">${messages.join(' ')}</li>`)}</ul>` : ''}
<form method="post" action="${action}">
${
  askDetails
    ? html`<label for="name" class="muted" style="flex-basis:100%">${t('rsvp_name')}</label>
<input type="text" id="name" name="name" required maxlength="255" autocomplete="name" value="${values.name ?? ''}"${invalid('name', problems.name)}>
<label for="email" class="muted" style="flex-basis:100%">${t('rsvp_email')}</label>
<input type="email" id="email" name="email" required maxlength="255" autocomplete="email" value="${values.email ?? ''}"${invalid('email', problems.email)}>`
    : ''
}
<button type="submit">${t('cal_subscribe')}</button>
</form>
</article>`,
  );
}

interface CalendarPageData {
  name: string;
  descriptionHtml: string;
  subscribe: Array<{ label: string; href: string }>;
  feedUrl: string;
  events: EventCard[];
  pageUrl: string;
  /** The visitor's likely platform, first in each event's control. */
  first?: PlatformKey | null;
  /** Addresses of the pages before and after this one, when there are. */
  previous?: string | null;
  next?: string | null;
  locale?: Locale;
}

/** The month an event starts in ("September 2026"), in the event's own zone (all-day: its date). */
const monthOf = (card: EventCard, locale: Locale) => monthFormatter(locale, card.isAllDay ? 'UTC' : card.timezone).format(card.startMs);

/** Events in date order, grouped under their months. */
function byMonth(events: EventCard[], item: (card: EventCard) => SafeHtml, headingLevel: 2 | 3, locale: Locale): SafeHtml {
  const groups: Array<{ month: string; cards: EventCard[] }> = [];
  for (const card of events) {
    const month = monthOf(card, locale);
    if (groups.at(-1)?.month === month) groups.at(-1)?.cards.push(card);
    else groups.push({ month, cards: [card] });
  }
  return html`${groups.map((g) => html`${safe(`<h${headingLevel} class="month">${html`${g.month}`.value}</h${headingLevel}>`)}<ul class="events">${g.cards.map((card) => html`<li>${item(card)}</li>`)}</ul>`)}`;
}

export function calendarPage(data: CalendarPageData): string {
  const locale = data.locale ?? 'en';
  const t = translator(locale);
  const event = (card: EventCard) => html`${eventDetails(card, 3, { locale })}${addToCalendar(card.links, { first: data.first, label: card.title, t })}`;
  return layout(
    { title: data.name, canonicalUrl: data.pageUrl, description: data.descriptionHtml ? textOf(data.descriptionHtml).replace(/\s+/g, ' ').slice(0, 300) : undefined, icons: true, lang: locale },
    html`<section class="card">
<h1>${data.name}</h1>
${data.descriptionHtml ? html`<div class="description">${safe(data.descriptionHtml)}</div>` : ''}
<p class="muted">${t('cal_subscribe_intro')}</p>
<ul class="buttons" aria-label="${t('cal_subscribe')}">${data.subscribe.map((s) => html`<li><a href="${s.href}" rel="nofollow">${s.label}</a></li>`)}</ul>
<p class="muted">${t('cal_feed_address')} <a href="${data.feedUrl}">${data.feedUrl}</a></p>
</section>
<section class="card" aria-labelledby="upcoming">
<h2 id="upcoming">${t('cal_upcoming')}</h2>
${data.events.length ? byMonth(data.events, event, 3, locale) : html`<p class="muted">${t('cal_none')}</p>`}
${
  data.previous || data.next
    ? html`<nav class="pages" aria-label="${t('cal_pages')}">${data.previous ? html`<a href="${data.previous}" rel="prev">${t('cal_earlier')}</a>` : html`<span></span>`}${data.next ? html`<a href="${data.next}" rel="next">${t('cal_later')}</a>` : ''}</nav>`
    : ''
}
</section>`,
  );
}

/** The calendar's widget for an iframe: its next events, each with its control, and a subscribe link. */
export function calendarEmbedPage(data: { name: string; pageUrl: string; subscribeUrl: string; events: EventCard[]; first?: PlatformKey | null; locale?: Locale }): string {
  const locale = data.locale ?? 'en';
  const t = translator(locale);
  const event = (card: EventCard) => html`${eventDetails(card, 3, { target: '_blank', zone: false, locale })}${addToCalendar(card.links, { first: data.first, target: '_blank', label: card.title, t })}`;
  return layout(
    { title: data.name, icons: true, embed: true, script: EMBED_HEIGHT_SCRIPT, lang: locale },
    html`<section class="card">
<h2><a href="${data.pageUrl}" target="_blank" rel="noopener">${data.name}</a></h2>
${data.events.length ? html`<ul class="events">${data.events.map((card) => html`<li>${event(card)}</li>`)}</ul>` : html`<p class="muted">${t('cal_none')}</p>`}
<p class="meta"><a class="updates" href="${data.subscribeUrl}" target="_blank" rel="noopener nofollow">${icon('updates')}${t('cal_subscribe_this')}</a></p>
</section>`,
  );
}

/** The service's own front page: what it is, where to start, and whether it is ready. */
export function landingPage(baseUrl: string, status: { ready: boolean; checks: { postgres: string; redis: string } }): string {
  const check = (name: string, state: string) => html`<li>${name}: <b class="${state === 'ok' ? 'ok' : 'error'}">${state === 'ok' ? 'answering' : 'not answering'}</b></li>`;
  return layout(
    { title: 'Calendar service', description: 'Calendars and events over a JSON API, with add-to-calendar links for every platform.' },
    html`<article class="card">
<h1>Calendar service</h1>
<p>A JSON REST API for calendars and events: every event comes with add-to-calendar links for Google, Apple, Outlook, Office 365, Yahoo and .ics files; smart links turn forms and webhooks into events; free text can be read into event fields; invitees get calendar invitations by email.</p>
<h2>Status</h2>
<p class="meta">${status.ready ? html`<b class="ok">Ready</b>` : html`<b class="error">Not ready</b>`} <span class="muted">(<a href="/readyz">/readyz</a>)</span></p>
<ul>${check('PostgreSQL', status.checks.postgres)}${check('Redis', status.checks.redis)}</ul>
<h2>Get started</h2>
<ol>
<li>On the server, make a team and its API token (shown once):<pre tabindex="0"><code>npm run --silent admin -- create-team --name "Acme" --email you@example.com</code></pre></li>
<li>Call the API with the token:<pre tabindex="0"><code>curl ${baseUrl}/api/calendars -H "Authorization: Bearer cst_…"</code></pre></li>
<li>Read the <a href="/docs">API reference</a>, or take the <a href="/docs.openapi">OpenAPI document</a> to your tools.</li>
</ol>
</article>`,
  );
}

/** The page an email's answer button opens: what it will record, and the button that records it. */
interface AnswerPageData {
  title: string;
  when: string;
  /** The button that was clicked in the email. */
  answer: 'yes' | 'maybe' | 'no';
  action: string;
  answerKey: string;
  /** Whose answer it is (the address the email went to). */
  who: string;
  /** After the POST: the answer saved. */
  saved?: boolean;
  /** Why it could not be saved. */
  error?: MessageKey;
  /** The event page, when it has one. */
  pageUrl?: string | null;
  /** Every place is taken and this person holds none: a yes cannot be given. */
  full?: boolean;
}

/**
 * One click from the email records the answer, but only as a POST: opening the link (as
 * a mail scanner or a link preview does) changes nothing. The clicked answer is the
 * first, filled button; the others stay a click away.
 */
export function answerPage(locale: Locale, d: AnswerPageData): string {
  const t = translator(locale);
  const label = (answer: 'yes' | 'maybe' | 'no') => t(ANSWER_LABEL[answer]);
  const button = (answer: 'yes' | 'maybe' | 'no', primary: boolean) =>
    html`<button type="submit" name="answer" value="${answer}"${primary ? '' : safe(' class="secondary"')}${answer === 'yes' && d.full ? safe(' disabled') : ''}>${primary ? t('answer_as', { answer: label(answer) }) : label(answer)}</button>`;
  // A yes to a full event is offered as the others: maybe comes first instead.
  const first = d.full && d.answer === 'yes' && !d.saved ? 'maybe' : d.answer;
  const others = (['yes', 'maybe', 'no'] as const).filter((a) => a !== first);
  return layout(
    { title: t('answer_page_title', { title: d.title }), lang: locale },
    html`<article class="card">
<h1>${d.title}</h1>
<p class="meta"><b>${t('when')}</b> ${d.when}</p>
${
  d.saved
    ? html`<p role="status" class="ok"><b>${t('answer_saved', { answer: label(d.answer) })}</b></p><p>${t('answer_change_later')}</p>`
    : html`<p>${withBold(t('answering_for', { who: '\u0000' }), d.who)}</p>
${d.error ? html`<p class="error" role="alert">${t(d.error)}</p>` : d.full ? html`<p class="error" role="alert">${t('rsvp_full')}</p>` : ''}
<form method="post" action="${d.action}">
<input type="hidden" name="key" value="${d.answerKey}">
${button(first, true)}
${others.map((a) => button(a, false))}
</form>`
}
${d.pageUrl ? html`<p class="muted"><a href="${d.pageUrl}">${t('open_event_page')}</a></p>` : ''}
</article>`,
  );
}

/**
 * The page of a reminder's unsubscribe link: before (a GET, which changes nothing: mail
 * scanners open links) a button that POSTs the same signed URL; after, what it did.
 */
export function optOutPage(locale: Locale, what: 'reminders' | 'all', p: { title: string; email: string; action: string; done: boolean }): string {
  const t = translator(locale);
  const k = what === 'reminders' ? ({ page: 'optout_page_title', title: 'optout_title', text: 'optout_text', button: 'optout_button', done: 'optout_done_text' } as const) : ({ page: 'mailoff_page_title', title: 'mailoff_title', text: 'mailoff_text', button: 'mailoff_button', done: 'mailoff_done_text' } as const);
  return layout(
    { title: t(p.done ? 'optout_done_title' : k.page), lang: locale },
    p.done
      ? html`<article class="card"><h1>${t('optout_done_title')}</h1><p>${t(k.done, { email: p.email, title: p.title })}</p></article>`
      : html`<article class="card">
<h1>${t(k.title)}</h1>
<p>${t(k.text, { email: p.email, title: p.title })}</p>
<form method="post" action="${p.action}"><button type="submit">${t(k.button)}</button></form>
</article>`,
  );
}
