import type { Request, Response } from 'express';
import type { EventView } from '../../../shared/calendar/event-view';
import { toIcsEvent } from '../../../shared/calendar/event-view';
import { buildIcs } from '../../../shared/calendar/ics';
import { WEB_PLATFORMS, type WebPlatform } from '../calendar/platform-urls';
import { contentDisposition, titleFileNames } from '../http/content-disposition';
import { likelyPlatform } from './add-to-calendar';
import { linkTexts, type Locale } from './i18n';

export type PlatformKey = WebPlatform | 'ics' | 'apple' | 'outlook';
export const PLATFORM_KEYS: PlatformKey[] = ['google', 'outlook_web', 'office365', 'yahoo', 'ics', 'apple', 'outlook'];

export const isPlatformKey = (key: string): key is PlatformKey => (PLATFORM_KEYS as string[]).includes(key);

/** Public answers are cacheable for a minute; anything opened with a code or signature is not. */
export const cacheControl = (personal: boolean) => (personal ? 'private, no-store' : 'public, max-age=60');

/**
 * Sends an event to a platform: a 302 to the web calendars, the .ics file for Apple,
 * Outlook (desktop) and plain downloads. Stored events and dynamic links both come here.
 * A web calendar's link adds words of ours (the rule, the link back to the page) in the
 * visitor's language (`locale`, from pageLocale): its answer varies with Accept-Language.
 */
export function deliver(
  res: Response,
  key: PlatformKey,
  view: EventView,
  opts: { uidHost: string; personal: boolean; locale: Locale; webUrl?: (platform: WebPlatform) => string },
): void {
  res.set('Cache-Control', cacheControl(opts.personal));
  if (key === 'ics' || key === 'apple' || key === 'outlook') {
    const body = buildIcs([toIcsEvent(view)], { uidHost: opts.uidHost });
    res
      .status(200)
      .type('text/calendar; charset=utf-8')
      .set('Content-Disposition', contentDisposition('attachment', titleFileNames(view.title, 'ics')))
      .send(body);
    return;
  }
  res.vary('Accept-Language');
  res.redirect(302, opts.webUrl ? opts.webUrl(key) : WEB_PLATFORMS[key](view, linkTexts(opts.locale)));
}

/** `auto`: the platform key for the visitor's browser, or null for the page itself. */
export function autoKey(req: Request): PlatformKey | null {
  return likelyPlatform(req.headers['user-agent']);
}
