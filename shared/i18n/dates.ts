import type { Locale } from './translations';

/**
 * Dates in a language other than English, as `Intl` writes them there (English keeps the
 * form used everywhere else: shared/calendar/format.ts, and the emails' own).
 */

/** One formatter per language, zone and kind, made once (making one costs tens of microseconds). */
const formatters = new Map<string, Intl.DateTimeFormat>();
function dateFormatter(locale: Locale, zone: string, kind: { allDay: boolean; zoneName: boolean }): Intl.DateTimeFormat {
  const zoneName = !kind.allDay && kind.zoneName;
  const key = kind.allDay ? `${locale} days` : `${locale} ${zone} ${zoneName}`;
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat(
      locale,
      kind.allDay
        ? { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' }
        : { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone: zone, ...(zoneName ? { timeZoneName: 'short' as const } : {}) },
    );
    formatters.set(key, formatter);
  }
  return formatter;
}

/**
 * When an event is, by `Intl.DateTimeFormat(locale).formatRange`: an all-day event's
 * calendar days (stored as UTC midnights, the end day included) and the language's
 * `allDay` word in brackets; a timed event's days and times in its zone, followed by the
 * zone's short name with `zoneName` (the pages, the emails' subjects), without it for a
 * caller that writes the zone itself (the emails' When).
 */
export function intlDateRange(
  locale: Locale,
  e: { isAllDay: boolean; startMs: number; endMs: number; timezone: string },
  opts: { allDay: string; zoneName: boolean },
): string {
  const range = dateFormatter(locale, e.timezone, { allDay: e.isAllDay, zoneName: opts.zoneName }).formatRange(e.startMs, e.endMs);
  return e.isAllDay ? `${range} (${opts.allDay})` : range;
}
