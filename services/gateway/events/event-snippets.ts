import { escapeHtml } from '../../../shared/calendar/html';
import { PLATFORMS, type PlatformKey } from '../../../shared/calendar/platforms';
import { EMBED_HEIGHT_MESSAGE } from '../public/views';

/** Display labels of the HTML snippet variants. */
export const HTML_LABELS = {
  'single-button': 'Single button',
  'icon-buttons-single-row': 'Icon buttons in a single row',
  icons: 'Icons only',
  'dot-sep': 'Links separated by dots',
  'space-sep': 'Links separated by spaces',
  iframe: 'Embedded widget (iframe) that sizes itself',
} as const;

type HtmlVariant = keyof typeof HTML_LABELS;

const ICON_LETTER: Record<PlatformKey, string> = {
  apple: 'A',
  google: 'G',
  office365: 'O',
  outlook: 'O',
  outlook_web: 'O',
  yahoo: 'Y',
  ics: 'i',
};

const BUTTON =
  'display:inline-block;padding:8px 14px;margin:2px;border:1px solid #d0d7de;border-radius:6px;background:#fff;color:#1f2328;font:14px/1.2 system-ui,sans-serif;text-decoration:none';
const ICON =
  'display:inline-block;width:28px;height:28px;margin:2px;border-radius:50%;background:#1f6feb;color:#fff;font:bold 14px/28px system-ui,sans-serif;text-align:center;text-decoration:none';


/**
 * The event's widget (`/e/{uid}/embed`) in an iframe, and a few lines that size the iframe
 * to the height the widget posts: messages from our origin only, each for its own frame.
 */
function iframeSnippet(title: string, eventPage: string): string {
  const origin = new URL(eventPage).origin;
  // JSON in a script: `<` escaped, so no value can close the element.
  const js = (value: string) => JSON.stringify(value).replace(/</g, '\\u003c');
  return [
    `<iframe src="${escapeHtml(`${eventPage}/embed`)}" title="${escapeHtml(`Add to calendar: ${title}`)}" style="border:0;width:100%;max-width:480px;height:200px;color-scheme:normal" loading="lazy"></iframe>`,
    '<script>',
    'addEventListener("message", function (e) {',
    `  if (e.origin !== ${js(origin)} || !e.data || e.data.type !== ${js(EMBED_HEIGHT_MESSAGE)}) return;`,
    '  document.querySelectorAll("iframe").forEach(function (frame) {',
    '    if (frame.contentWindow === e.source) frame.style.height = e.data.height + "px";',
    '  });',
    '});',
    '</script>',
  ].join('\n');
}

/**
 * Ready-to-paste markup for an event's links: plain anchors with inline styles, no
 * scripts, every value escaped, so it renders the same in any page it is pasted into.
 */
export function htmlSnippets(title: string, links: Record<string, string>): Record<HtmlVariant, string> {
  const t = escapeHtml(title);
  const href = (key: string) => escapeHtml(links[key]);
  const anchors = (style: string | null, text: (p: (typeof PLATFORMS)[number]) => string) =>
    PLATFORMS.map(
      (p) =>
        `<a href="${href(p.key)}"${style ? ` style="${style}"` : ''} aria-label="${escapeHtml(p.label)}" title="${escapeHtml(p.label)}: ${t}" rel="nofollow">${text(p)}</a>`,
    );
  const wrap = (inner: string) => `<div class="add-to-calendar" data-event-title="${t}">${inner}</div>`;
  return {
    'single-button': wrap(`<a href="${href('event_page')}" style="${BUTTON}" title="Add to calendar: ${t}" rel="nofollow">Add to calendar</a>`),
    'icon-buttons-single-row': wrap(
      `<span style="white-space:nowrap">${anchors(BUTTON, (p) => `${escapeHtml(ICON_LETTER[p.key])} ${escapeHtml(p.label)}`).join('')}</span>`,
    ),
    icons: wrap(anchors(ICON, (p) => escapeHtml(ICON_LETTER[p.key])).join('')),
    'dot-sep': wrap(anchors(null, (p) => escapeHtml(p.label)).join(' &middot; ')),
    'space-sep': wrap(anchors(null, (p) => escapeHtml(p.label)).join(' ')),
    iframe: iframeSnippet(title, links.event_page),
  };
}
