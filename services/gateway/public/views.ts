import { subscribeUrls } from '../calendar/platform-urls';
import { PLATFORMS } from '../../../shared/calendar/platforms';
import { html, safe, type SafeHtml } from './html';

/**
 * The public pages: plain server-rendered HTML with inline styles, no scripts and nothing
 * loaded from elsewhere. Every value a user wrote is escaped by `html`; descriptions are
 * stored sanitized and go in as they are.
 */

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
 * The Content-Security-Policy of every page above (and of error pages): no script runs and
 * nothing loads from elsewhere even if escaping ever failed; only the embed widget may be framed.
 */
const PAGE_CSP = `default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action ${FORM_TARGETS}; base-uri 'none'`;
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
.error{color:#cf222e}
.muted{color:#656d76;font-size:.9rem}
ul.events{list-style:none;margin:0;padding:0}
ul.events>li{border-top:1px solid #d8dee4;padding:.75rem 0}
p,li{overflow-wrap:anywhere}
code{font:.9em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f3f4f6;border-radius:4px;padding:.1em .3em;overflow-wrap:anywhere}
.ok{color:#1a7f37}
pre{background:#f3f4f6;border-radius:8px;padding:.6rem .8rem;overflow-x:auto;margin:.4rem 0 .8rem}
pre code{background:none;padding:0;overflow-wrap:normal}
`;

interface PageOptions {
  title: string;
  description?: string;
  imageUrl?: string | null;
  canonicalUrl?: string;
}

function layout(opts: PageOptions, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title}</title>
${opts.description ? html`<meta name="description" content="${opts.description}">` : ''}
<meta property="og:title" content="${opts.title}">
${opts.description ? html`<meta property="og:description" content="${opts.description}">` : ''}
${opts.imageUrl ? html`<meta property="og:image" content="${opts.imageUrl}">` : ''}
${opts.canonicalUrl ? html`<link rel="canonical" href="${opts.canonicalUrl}">` : ''}
<style>${safe(STYLE)}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`.value;
}

/** What a page shows of an event, already formatted. */
export interface EventCard {
  title: string;
  when: string;
  zone: string | null;
  repeats: string | null;
  location: string | null;
  locationUrl: string | null;
  descriptionHtml: string | null;
  /** Platform key → address, carrying a signature when the page was opened with one. */
  links: Record<string, string>;
  pageUrl: string;
}

const isUrl = (value: string) => /^https?:\/\/\S+$/i.test(value.trim());

function where(card: EventCard): SafeHtml | string {
  const text = card.location ?? '';
  const url = card.locationUrl ?? (isUrl(text) ? text.trim() : null);
  if (!text && !url) return '';
  const label = text || url;
  const shown = url ? html`<a href="${url}" rel="nofollow noopener noreferrer" target="_blank">${label}</a>` : label;
  // Locations may hold line breaks: keep them.
  const withBreaks = typeof shown === 'string' ? safe(html`${shown}`.value.replace(/\n/g, '<br>')) : shown;
  return html`<p class="meta"><b>Where</b> ${withBreaks}</p>`;
}

/** Link attributes: one `rel` (a second one is invalid HTML, and browsers keep only the first). */
const linkAttrs = (target: string | undefined, rel: string[]) =>
  target ? html` target="${target}" rel="${['noopener', ...rel].join(' ')}"` : rel.length ? html` rel="${rel.join(' ')}"` : '';

function buttons(links: Record<string, string>, opts: { small?: boolean; target?: string } = {}): SafeHtml {
  return html`<ul class="buttons${opts.small ? ' small' : ''}" aria-label="Add to calendar">${PLATFORMS.map(
    (p) => html`<li><a href="${links[p.key]}"${linkAttrs(opts.target, ['nofollow'])}>${p.label}</a></li>`,
  )}</ul>`;
}

/**
 * The event's heading: on its own page a title, in lists and widgets a link to the page
 * (`links.event_page`, which carries the signed pair when the widget was opened with one).
 */
function eventDetails(card: EventCard, headingLevel: 1 | 2, opts: { target?: string } = {}): SafeHtml {
  const heading =
    headingLevel === 1 ? html`<h1>${card.title}</h1>` : html`<h2><a href="${card.links.event_page ?? card.pageUrl}"${linkAttrs(opts.target, [])}>${card.title}</a></h2>`;
  return html`${heading}
<p class="meta"><b>When</b> ${card.when}${card.zone ? html` <span class="muted">(${card.zone})</span>` : ''}</p>
${card.repeats ? html`<p class="meta"><b>Repeats</b> ${card.repeats}</p>` : ''}
${where(card)}`;
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

const ANSWER_LABEL = { yes: 'Yes', maybe: 'Maybe', no: 'No' } as const;

/** A field's problems, said beside it and tied to it for screen readers. */
const fieldErrors = (id: string, messages: string[] | undefined) =>
  messages?.length ? html`<p class="error" id="${id}-error" style="flex-basis:100%;margin:0">${messages.join(' ')}</p>` : '';
const invalid = (id: string, messages: string[] | undefined) => (messages?.length ? html` aria-invalid="true" aria-describedby="${id}-error"` : '');

/** What the page says after an answer: saved, or held until the address uses its link. */
type RsvpNotice = 'thanks' | 'link_sent';
export const rsvpNotice = (value: unknown): RsvpNotice | undefined => (value === 'thanks' || value === 'link_sent' ? value : undefined);

function rsvpSection(box: RsvpBox): SafeHtml {
  const full = box.limit !== null && box.counts.yes >= box.limit;
  const places = box.limit === null ? '' : full ? ' · no places left' : ` · ${box.limit - box.counts.yes} of ${box.limit} places left`;
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
    html`<label><input type="radio" name="answer" value="${answer}"${answer === 'yes' && yesDisabled ? safe(' disabled') : answer === checked ? safe(' checked') : ''}> ${ANSWER_LABEL[answer]}</label>`;
  const value = (v: string | undefined) => (v === undefined ? '' : html` value="${v}"`);
  return html`<section class="card" aria-labelledby="rsvp-title">
<h2 id="rsvp-title">Will you come?</h2>
<p class="meta">${box.counts.yes} going · ${box.counts.maybe} maybe${places}</p>
${box.notice === 'thanks' ? html`<p role="status"><b>Thanks, your answer is saved.</b> A yes or maybe is confirmed by email, with the event for your calendar. To change it, answer again from this browser or use the link in the email.</p>` : ''}
${box.notice === 'link_sent' ? html`<p role="status"><b>This email address has answered before.</b> We have sent it a link for changing the answer; until it is used, the answer stays as it was.</p>` : ''}
${refused ? html`<p class="error" role="alert"><b>Your answer was not saved.</b> ${errors.form?.length ? errors.form.join(' ') : 'Please correct what is marked below.'}</p>` : ''}
${yours && !refused ? html`<p>Your answer: <b>${ANSWER_LABEL[yours.answer]}</b> (${yours.name}, ${yours.email}). You can change it here.</p>` : ''}
${yesDisabled ? html`<p class="error">This event is full: you can still answer maybe or no.</p>` : ''}
<form method="post" action="${box.action}">
<label for="rsvp-name" class="muted" style="flex-basis:100%">Name</label>
<input type="text" id="rsvp-name" name="name" required maxlength="255" autocomplete="name"${value(name)}${invalid('rsvp-name', errors.name)}>
${fieldErrors('rsvp-name', errors.name)}
<label for="rsvp-email" class="muted" style="flex-basis:100%">Email</label>
<input type="email" id="rsvp-email" name="email" required maxlength="255" autocomplete="email"${value(email)}${invalid('rsvp-email', errors.email)}>
${fieldErrors('rsvp-email', errors.email)}
<fieldset style="flex-basis:100%;border:0;padding:0;margin:.25rem 0;display:flex;flex-wrap:wrap;gap:1rem"${invalid('rsvp-answer', errors.answer)}>
<legend class="muted">Answer</legend>
${radio('yes')}
${radio('maybe')}
${radio('no')}
${fieldErrors('rsvp-answer', errors.answer)}
</fieldset>
<button type="submit">Send answer</button>
</form>
</section>`;
}

export function eventPage(card: EventCard, extra?: { imageUrl?: string | null; description?: string; rsvp?: RsvpBox }): string {
  return layout(
    { title: card.title, description: extra?.description ?? card.when, imageUrl: extra?.imageUrl, canonicalUrl: card.pageUrl },
    html`<article class="card">
${eventDetails(card, 1)}
${card.descriptionHtml ? html`<div class="description">${safe(card.descriptionHtml)}</div>` : ''}
<p class="muted">Add it to your calendar:</p>
${buttons(card.links)}
</article>
${extra?.rsvp ? rsvpSection(extra.rsvp) : ''}`,
  );
}

/** A compact widget for an iframe: links open outside the frame. */
export function embedPage(card: EventCard): string {
  return layout(
    { title: card.title },
    html`<article class="card">${eventDetails(card, 2, { target: '_blank' })}${buttons(card.links, { small: true, target: '_blank' })}</article>`,
  );
}

export function lockedPage(uid: string, error?: string): string {
  return layout(
    { title: 'Protected event' },
    html`<article class="card">
<h1>This event is protected</h1>
<p>Enter the access code you were given to see it.</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/e/${uid}/unlock">
<label for="access_code" class="muted" style="flex-basis:100%">Access code</label>
<input type="password" id="access_code" name="access_code" required minlength="4" maxlength="64" autocomplete="off">
<button type="submit">Open</button>
</form>
</article>`,
  );
}

export function errorPage(status: number, message: string, fieldErrors?: Record<string, string[]>): string {
  const title = status >= 500 ? 'Something went wrong' : status === 404 ? 'Not found' : 'Cannot show this page';
  const list = fieldErrors ? Object.values(fieldErrors).flat() : [];
  return layout(
    { title },
    html`<article class="card"><h1>${title}</h1>${
      list.length > 1 ? html`<ul class="error">${list.map((m) => html`<li>${m}</li>`)}</ul>` : html`<p class="error">${message}</p>`
    }</article>`,
  );
}

export function messagePage(title: string, message: string): string {
  return layout({ title }, html`<article class="card"><h1>${title}</h1><p>${message}</p></article>`);
}

/** The form a calendar that asks who subscribes shows before sending people on. */
/**
 * The subscribe page: a button that subscribes (a POST: opening the address, as a link
 * preview or a mail scanner does, records nothing), with name and email fields when the
 * calendar asks for them.
 */
export function subscribeDetailsPage(calendarName: string, action: string, errors: string[] = [], values: { name?: string; email?: string } = {}, askDetails = true): string {
  return layout(
    { title: `Subscribe to ${calendarName}` },
    html`<article class="card">
<h1>Subscribe to ${calendarName}</h1>
<p>${askDetails ? 'Tell us who you are, then your calendar app opens with this calendar.' : 'Your calendar app opens with this calendar, and keeps it up to date.'}</p>
${errors.length ? html`<ul class="error" role="alert">${errors.map((e) => html`<li>${e}</li>`)}</ul>` : ''}
<form method="post" action="${action}">
${
  askDetails
    ? html`<label for="name" class="muted" style="flex-basis:100%">Name</label>
<input type="text" id="name" name="name" required maxlength="255" autocomplete="name" value="${values.name ?? ''}">
<label for="email" class="muted" style="flex-basis:100%">Email</label>
<input type="email" id="email" name="email" required maxlength="255" autocomplete="email" value="${values.email ?? ''}">`
    : ''
}
<button type="submit">Subscribe</button>
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
}

export function calendarPage(data: CalendarPageData): string {
  return layout(
    { title: data.name, canonicalUrl: data.pageUrl },
    html`<section class="card">
<h1>${data.name}</h1>
${data.descriptionHtml ? html`<div class="description">${safe(data.descriptionHtml)}</div>` : ''}
<p class="muted">Subscribe to get every event of this calendar in yours:</p>
<ul class="buttons" aria-label="Subscribe">${data.subscribe.map((s) => html`<li><a href="${s.href}" rel="nofollow">${s.label}</a></li>`)}</ul>
<p class="muted">Feed address: <a href="${data.feedUrl}">${data.feedUrl}</a></p>
</section>
<section class="card">
<h1>Upcoming events</h1>
${
  data.events.length
    ? html`<ul class="events">${data.events.map((card) => html`<li>${eventDetails(card, 2)}${buttons(card.links, { small: true })}</li>`)}</ul>`
    : html`<p class="muted">No upcoming events.</p>`
}
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
<li>On the server, make a team and its API token (shown once):<pre><code>npm run --silent admin -- create-team --name "Acme" --email you@example.com</code></pre></li>
<li>Call the API with the token:<pre><code>curl ${baseUrl}/api/calendars -H "Authorization: Bearer cst_…"</code></pre></li>
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
  /** Why it could not be saved (the event is full, …). */
  error?: string;
  /** The event page, when it has one. */
  pageUrl?: string | null;
}

/**
 * One click from the email records the answer, but only as a POST: opening the link (as
 * a mail scanner or a link preview does) changes nothing. The clicked answer is the
 * first, filled button; the others stay a click away.
 */
export function answerPage(d: AnswerPageData): string {
  const button = (answer: 'yes' | 'maybe' | 'no', primary: boolean) =>
    html`<button type="submit" name="answer" value="${answer}"${primary ? '' : safe(' class="secondary"')}>${primary ? `Answer ${ANSWER_LABEL[answer]}` : ANSWER_LABEL[answer]}</button>`;
  const others = (['yes', 'maybe', 'no'] as const).filter((a) => a !== d.answer);
  return layout(
    { title: `Your answer: ${d.title}` },
    html`<article class="card">
<h1>${d.title}</h1>
<p class="meta"><b>When</b> ${d.when}</p>
${
  d.saved
    ? html`<p role="status" class="ok"><b>Thanks, your answer is saved: ${ANSWER_LABEL[d.answer]}.</b></p><p>You can change it with the buttons of the email at any time.</p>`
    : html`<p>Answering for <b>${d.who}</b>.</p>
${d.error ? html`<p class="error" role="alert">${d.error}</p>` : ''}
<form method="post" action="${d.action}">
<input type="hidden" name="key" value="${d.answerKey}">
${button(d.answer, true)}
${others.map((a) => button(a, false))}
</form>`
}
${d.pageUrl ? html`<p class="muted"><a href="${d.pageUrl}">Open the event page</a></p>` : ''}
</article>`,
  );
}

/**
 * The page of a reminder's unsubscribe link: before (a GET, which changes nothing: mail
 * scanners open links) a button that POSTs the same signed URL; after, what it did.
 */
export function reminderOptOutPage(p: { title: string; email: string; action: string; done: boolean }): string {
  return layout(
    { title: p.done ? 'Unsubscribed' : 'Stop reminders' },
    p.done
      ? html`<article class="card"><h1>Unsubscribed</h1><p>${p.email} will get no more email reminders for “${p.title}”.</p></article>`
      : html`<article class="card">
<h1>Stop reminders?</h1>
<p>${p.email} gets email reminders before “${p.title}”.</p>
<form method="post" action="${p.action}"><button type="submit">Stop these reminders</button></form>
</article>`,
  );
}
