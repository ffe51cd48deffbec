import { isbot } from 'isbot';

type AutoTarget = 'apple' | 'google' | 'outlook' | 'event_page';

// In-app browsers (Facebook, Instagram, LinkedIn, Line, WeChat, Android WebView…) cannot
// open calendar apps or download .ics reliably: they get the page with every button.
const IN_APP = /FBAN|FBAV|FB_IAB|Instagram|LinkedInApp|Line\/|MicroMessenger|Twitter|Snapchat|Pinterest|TikTok|musical_ly|; wv\)|GSA\//i;

/**
 * The platform that fits the visitor: Apple devices → Apple Calendar (.ics), Android →
 * Google, Windows → Outlook (.ics), in-app browsers and bots → the event page, anything
 * else → Google.
 */
export function autoTarget(userAgent: string | undefined): AutoTarget {
  const ua = userAgent ?? '';
  if (!ua || isbot(ua) || IN_APP.test(ua)) return 'event_page';
  if (/iPhone|iPad|iPod|Macintosh|Mac OS X/.test(ua)) return 'apple';
  if (/Android/i.test(ua)) return 'google';
  if (/Windows/i.test(ua)) return 'outlook';
  return 'google';
}
