/** The add-to-calendar targets, in the order buttons show them. */
export const PLATFORMS = [
  { key: 'apple', label: 'Apple' },
  { key: 'google', label: 'Google' },
  { key: 'office365', label: 'Office 365' },
  { key: 'outlook', label: 'Outlook' },
  { key: 'outlook_web', label: 'Outlook.com' },
  { key: 'yahoo', label: 'Yahoo' },
  { key: 'ics', label: 'iCal file' },
] as const;

export type PlatformKey = (typeof PLATFORMS)[number]['key'];


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
