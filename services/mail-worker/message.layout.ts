import mjml2html from 'mjml';
import { escapeHtml } from '../../shared/calendar/html';
import { PLATFORMS } from '../../shared/calendar/platforms';
import type { Locale, Translate } from '../../shared/i18n/translations';
import { type MailTextKey, mailTexts } from './i18n';
import { parseTemplate, type Template, templateNames } from './mail-template';

/**
 * The HTML layout of every message, in MJML: a card at most 600 px wide (full width on a
 * phone), the title, the facts, the buttons, the description, and a footer saying why
 * the message came. MJML turns it into the table-based, inline-styled HTML that mail
 * clients render alike; that is slow (tens of milliseconds), so it is done once per
 * process and language (on the first message in that language), and each message is
 * filled by substitution (see mail-template.ts). The layout's own words (labels, buttons,
 * `lang`) are the language's, from the catalogs (i18n.ts).
 *
 * Slots (`{{name}}`, escaped text unless given as HTML) and blocks (kept when true):
 * - per job: subject, preview, lead, titleHtml, when, organizer/organizerName,
 *   where/whereHtml, repeats/repeatsText, actions (either of:) page/pageUrl, changeAnswer/answerUrl,
 *   calendar/pagePath/pageQuery, description/descriptionHtml, note;
 * - per recipient (LATER): answer/yesUrl/maybeUrl/noUrl, reason, unsubscribe/unsubscribeUrl/unsubscribeLabel.
 */
export const LATER = new Set(['answer', 'yesUrl', 'maybeUrl', 'noUrl', 'reason', 'unsubscribe', 'unsubscribeUrl', 'unsubscribeLabel']);

/** The colours and font of every message (account messages too: see account-mail.ts). */
export const INK = '#1f2328';
export const MUTED = '#57606a';
export const ACCENT = '#0a58ca';
const LINE = '#d0d7de';
export const PAGE = '#f2f4f7';
export const FONT = "-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";

/** A link drawn as a button; inline-block, so a row of them wraps on a narrow screen. */
export const button = (href: string, label: string, primary = false) =>
  `<a href="${href}" style="display:inline-block;margin:0 8px 8px 0;padding:${primary ? '10px 18px' : '8px 14px'};border:1px solid ${primary ? ACCENT : LINE};` +
  `border-radius:6px;background:${primary ? ACCENT : '#ffffff'};color:${primary ? '#ffffff' : ACCENT};font-size:15px;font-weight:600;line-height:20px;` +
  `text-decoration:none;white-space:nowrap">${label}</a>`;

const label = (text: string) => `<div style="margin:0 0 8px;font-size:13px;font-weight:600;color:${MUTED}">${text}</div>`;

/**
 * A fact: its name in a column 84 px wide, which English's names fit. Other languages'
 * may be longer ("Wiederholung"): their column grows to the longest instead of breaking
 * the word.
 */
const factRow = (name: string, value: string, locale: Locale) =>
  `<tr><th scope="row" align="left" valign="top" style="width:84px;${locale === 'en' ? '' : 'white-space:nowrap;'}padding:4px 12px 4px 0;font-weight:600;color:${MUTED}">${name}</th>` +
  `<td valign="top" style="padding:4px 0;word-break:break-word;overflow-wrap:anywhere">${value}</td></tr>`;

const text = (inner: string, attrs = '') => `<mj-text${attrs}>${inner}</mj-text>`;
/** A group of buttons, kept or dropped as one. */
const group = (name: string, inner: string) => `<!--{{#${name}}}--><div style="padding:8px 0 8px">${inner}</div><!--{{/${name}}}-->`;

/** The add-to-calendar buttons' labels: brand names, but for the file, which says what it is. */
export const platformLabel = (p: (typeof PLATFORMS)[number], t: Translate<MailTextKey>) => (p.key === 'ics' ? t('ics_file') : p.label);

/** The layout's MJML in a language: its words escaped once here, its slots left as they are. */
const source = (locale: Locale) => {
  const t = (key: MailTextKey, values?: Record<string, string>) => escapeHtml(mailTexts(locale)(key, values));
  return `<mjml lang="${locale}">
<mj-head>
  <mj-title>{{subject}}</mj-title>
  <mj-preview>{{preview}}</mj-preview>
  <mj-raw><meta name="color-scheme" content="light"><meta name="supported-color-schemes" content="light"></mj-raw>
  <mj-attributes>
    <mj-all font-family="${FONT}" />
    <mj-text font-size="16px" line-height="24px" color="${INK}" padding="0" />
    <mj-section padding="0" />
    <mj-column padding="0" />
  </mj-attributes>
  <mj-style>
    :root { color-scheme: light; }
    a { color: ${ACCENT}; }
    .title h1 { margin: 0; font-size: 24px; line-height: 30px; font-weight: 700; word-break: break-word; overflow-wrap: anywhere; }
    .desc h1, .desc h2, .desc h3, .desc h4, .desc h5, .desc h6 { margin: 16px 0 4px !important; font-size: 17px !important; line-height: 24px !important; font-weight: 700; }
    .desc p, .desc ul, .desc ol, .desc blockquote, .desc pre { margin: 0 0 12px; }
    .desc pre { white-space: pre-wrap; }
    .desc img { max-width: 100%; height: auto; }
    .desc { word-break: break-word; overflow-wrap: anywhere; }
  </mj-style>
</mj-head>
<mj-body width="600px" background-color="${PAGE}">
  <mj-section padding="20px 0 0"><mj-column><mj-spacer height="1px" /></mj-column></mj-section>
  <mj-section background-color="#ffffff" padding="24px 24px 24px" border-top="4px solid ${ACCENT}"><mj-column>
    ${text(`<div style="margin:0 0 6px;font-size:15px;color:${MUTED}">{{lead}}</div><h1 style="margin:0;font-size:24px;line-height:30px;font-weight:700">{{titleHtml}}</h1>`, ' css-class="title"')}
    ${text(`<!--{{#organizer}}--><div style="margin:6px 0 0;font-size:15px;color:${MUTED}">${t('organized_by', { name: '{{organizerName}}' })}</div><!--{{/organizer}}-->`)}
    ${text(
      `<table role="presentation" cellpadding="0" cellspacing="0" border="0" style="width:100%;border-collapse:collapse;font-size:16px;line-height:24px;color:${INK}">` +
        factRow(t('when'), '{{when}}', locale) +
        `<!--{{#where}}-->${factRow(t('where'), '{{whereHtml}}', locale)}<!--{{/where}}-->` +
        `<!--{{#repeats}}-->${factRow(t('repeats'), '{{repeatsText}}', locale)}<!--{{/repeats}}-->` +
        '</table>',
      ' padding="16px 0 8px"',
    )}
    ${text(
      group('answer', label(t('will_you_attend')) + (['yes', 'maybe', 'no'] as const).map((a) => button(`{{${a}Url}}`, t(a))).join('\n')) +
        group('actions', `<!--{{#page}}-->${button('{{pageUrl}}', t('open_event_page'), true)}<!--{{/page}}-->\n<!--{{#changeAnswer}}-->${button('{{answerUrl}}', t('change_answer'), true)}<!--{{/changeAnswer}}-->`) +
        group('calendar', label(t('add_to_calendar')) + PLATFORMS.map((p) => button(`{{pagePath}}/${p.key}{{pageQuery}}`, escapeHtml(platformLabel(p, mailTexts(locale))))).join('\n')),
    )}
    <mj-raw><!--{{#description}}--></mj-raw>
    <mj-divider border-width="1px" border-color="${LINE}" padding="8px 0 4px" />
    ${text('{{descriptionHtml}}', ' css-class="desc"')}
    <mj-raw><!--{{/description}}--></mj-raw>
    ${text(`<div style="padding:12px 0 0;border-top:1px solid ${LINE}">{{note}}</div>`, ` font-size="14px" line-height="20px" color="${MUTED}" padding="8px 0 0"`)}
  </mj-column></mj-section>
  <mj-section padding="16px 24px 32px"><mj-column>
    ${text(`{{reason}}<!--{{#unsubscribe}}--><br><a href="{{unsubscribeUrl}}" style="color:${MUTED};text-decoration:underline">{{unsubscribeLabel}}</a><!--{{/unsubscribe}}-->`, ` font-size="13px" line-height="20px" color="${MUTED}" align="center"`)}
  </mj-column></mj-section>
</mj-body>
</mjml>`;
};

const compiled = new Map<Locale, Promise<Template>>();

/** The layout in a language as a template, compiled on its first use (English: the worker's start) and kept. */
export function layout(locale: Locale): Promise<Template> {
  let template = compiled.get(locale);
  if (!template) {
    template = compile(locale);
    compiled.set(locale, template);
  }
  return template;
}

async function compile(locale: Locale): Promise<Template> {
  // No web fonts: a message loads nothing from outside.
  const { html, errors } = await mjml2html(source(locale), { validationLevel: 'strict', fonts: {}, keepComments: true });
  if (errors.length) throw new Error(`message layout (${locale}): ${errors.map((e) => e.formattedMessage).join('; ')}`);
  // The compiler indents its output; the indentation is a fifth of the bytes of every
  // message. Line breaks are made CRLF (a MIME body's canonical form) here, once.
  const template = parseTemplate(html.replace(/\n[ \t]+/g, '\n').replace(/\r?\n/g, '\r\n'));
  const names = templateNames(template);
  for (const n of LATER) if (!names.has(n)) throw new Error(`message layout (${locale}): {{${n}}} is missing`);
  return template;
}
