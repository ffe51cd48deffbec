import { escapeHtml } from '../../../shared/calendar/html';
import { PLATFORMS, type PlatformKey } from '../../../shared/calendar/platforms';

/** Display labels of the HTML snippet variants. */
export const HTML_LABELS = {
  'single-button': 'Single button',
  'icon-buttons-single-row': 'Icon buttons in a single row',
  icons: 'Icons only',
  'dot-sep': 'Links separated by dots',
  'space-sep': 'Links separated by spaces',
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
  };
}
