/**
 * The add-to-calendar targets, in the order buttons show them: the event page's buttons,
 * the embeddable snippets, dynamic links and the emails' "Add to calendar" row. Each is
 * the route `/e/{uid}/{key}`.
 */
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
