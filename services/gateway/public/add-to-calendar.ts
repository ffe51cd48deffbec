import type { PlatformKey } from '../../../shared/calendar/platforms';
import { html, safe, type SafeHtml } from './html';
import { autoTarget } from './user-agent';
import { type MessageKey, type Translate, translator } from './i18n';

/**
 * The pages' one "Add to calendar" control: a native <details> disclosure (it opens without
 * JavaScript and from the keyboard) listing the platforms, the visitor's likely one first.
 */

/** The entries, in the usual order; each says what it does (its label and hint in the page's language). */
const ENTRIES: ReadonlyArray<{ key: PlatformKey; hint: MessageKey | null }> = [
  { key: 'apple', hint: 'apple_hint' },
  { key: 'google', hint: 'google_hint' },
  { key: 'outlook', hint: 'outlook_hint' },
  { key: 'office365', hint: 'office365_hint' },
  { key: 'outlook_web', hint: 'outlook_web_hint' },
  { key: 'yahoo', hint: null },
  { key: 'ics', hint: 'ics_hint' },
];

/**
 * The platform the visitor most likely uses, from the User-Agent: the choice of the `auto`
 * route (Apple devices → Apple, Android → Google, Windows → Outlook), null when it has none
 * (bots, in-app browsers: the usual order).
 */
export function likelyPlatform(userAgent: string | undefined): PlatformKey | null {
  const target = autoTarget(userAgent);
  return target === 'event_page' ? null : target;
}

/** The entries in the order the control lists them: the likely platform first, the others as usual. */
const orderedPlatforms = (first: PlatformKey | null) => (first ? [...ENTRIES.filter((e) => e.key === first), ...ENTRIES.filter((e) => e.key !== first)] : [...ENTRIES]);

/** A calendar glyph in a platform's colour with its letter. */
const lettered = (color: string, letter: string) =>
  `<rect x="2" y="3" width="20" height="19" rx="4" fill="${color}"/><text x="12" y="17.5" text-anchor="middle" font-size="11" font-weight="700" fill="#fff" font-family="Arial,sans-serif">${letter}</text>`;
const stroke = (d: string) => `<path d="${d}" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"/>`;

/** Icons drawn here (24×24), kept once per page as symbols and used by reference. */
const ICONS: Record<PlatformKey | 'calendar' | 'updates', string> = {
  calendar: stroke('M4 6h16v15H4zM4 10h16M8 3v4M16 3v4M12 13v5M9.5 15.5h5'),
  updates: stroke('M5 12a7 7 0 0 1 12-5l2 2M19 12a7 7 0 0 1-12 5l-2-2M19 4v5h-5M5 20v-5h5'),
  apple:
    '<path fill="currentColor" d="M16.4 12.7c0-2.2 1.8-3.3 1.9-3.4-1-1.5-2.6-1.7-3.2-1.7-1.4-.1-2.6.8-3.3.8s-1.7-.8-2.8-.8C7.6 7.6 6 8.5 5.2 10c-1.6 2.7-.4 6.8 1.1 9 .8 1.1 1.6 2.3 2.8 2.3 1.1 0 1.5-.7 2.8-.7s1.7.7 2.8.7c1.2 0 1.9-1.1 2.7-2.2.8-1.2 1.2-2.4 1.2-2.5-.1 0-2.3-.9-2.3-3.5zM14.3 6.1c.6-.7 1-1.7.9-2.7-.9 0-1.9.6-2.5 1.3-.6.6-1 1.6-.9 2.6 1 .1 1.9-.5 2.5-1.2z"/>',
  google: lettered('#1a73e8', 'G'),
  outlook: lettered('#0f5ea8', 'O'),
  office365: lettered('#c43e00', 'O'),
  outlook_web: lettered('#0067b8', 'O'),
  yahoo: lettered('#6001d2', 'Y'),
  ics: stroke('M12 3v12M7 10l5 5 5-5M4 20h16'),
};

/** The symbols every control on a page refers to: put once in the page, hidden. */
export const ICON_SPRITE = safe(
  `<svg width="0" height="0" style="position:absolute" aria-hidden="true" focusable="false">${Object.entries(ICONS)
    .map(([name, body]) => `<symbol id="i-${name}" viewBox="0 0 24 24">${body}</symbol>`)
    .join('')}</svg>`,
);

export const icon = (name: keyof typeof ICONS) => safe(`<svg class="icon" aria-hidden="true" focusable="false"><use href="#i-${name}"/></svg>`);

/** Link attributes: one `rel` (a second one is invalid HTML, and browsers keep only the first). */
export const linkAttrs = (target: string | undefined, rel: string[]) =>
  target ? html` target="${target}" rel="${['noopener', ...rel].join(' ')}"` : rel.length ? html` rel="${rel.join(' ')}"` : '';

/**
 * The control. `links` maps each platform key to its `/e/{uid}/{key}` address (with the
 * signed pair when the page was opened with one); `label` names the event for screen
 * readers where a page lists several.
 */
export function addToCalendar(links: Record<string, string>, opts: { first?: PlatformKey | null; target?: string; label?: string; t?: Translate } = {}): SafeHtml {
  const t = opts.t ?? translator('en');
  const entries = orderedPlatforms(opts.first ?? null);
  return html`<details class="atc"><summary${opts.label ? html` aria-label="${t('add_to_calendar_for', { title: opts.label })}"` : ''}>${icon('calendar')}<span>${t('add_to_calendar')}</span></summary><ul class="atc-list">${entries.map(
    (e) =>
      html`<li><a href="${links[e.key]}" data-platform="${e.key}"${linkAttrs(opts.target, ['nofollow'])}>${icon(e.key)}<span>${t(e.key)}${e.hint ? html`<small>${t(e.hint)}</small>` : ''}</span></a></li>`,
  )}</ul></details>`;
}
