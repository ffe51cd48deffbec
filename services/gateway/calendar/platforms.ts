import type { PlatformKey } from '../../../shared/calendar/platforms';


/** `/e/{uid}/{key}` addresses (docs/public-pages.md), the page first. */
export function eventLinks(publicUrl: string): Record<'event_page' | 'auto' | PlatformKey, string> {
  const at = (key: string) => `${publicUrl}/${key}`;
  return {
    event_page: publicUrl,
    auto: at('auto'),
    google: at('google'),
    apple: at('apple'),
    outlook: at('outlook'),
    outlook_web: at('outlook_web'),
    yahoo: at('yahoo'),
    office365: at('office365'),
    ics: at('ics'),
  };
}
