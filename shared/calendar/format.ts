import { DateTime } from 'luxon';
import { zoneAbbreviation } from './time-zones';

const DAY = 'ccc LLL d, yyyy';
const TIME = 'h:mm a';

/**
 * Human-readable range: `Tue Mar 10, 2026 1:00 PM - 2:30 PM (EDT)`; all-day ranges take
 * calendar days and end with `(all day)`.
 */
export function formatDateRange(opts: {
  isAllDay: boolean;
  start: DateTime;
  end: DateTime;
  zone: string;
}): string {
  if (opts.isAllDay) {
    const first = opts.start.setZone('UTC', { keepLocalTime: true });
    const last = opts.end.setZone('UTC', { keepLocalTime: true });
    const a = first.setLocale('en-US').toFormat(DAY);
    const b = last.setLocale('en-US').toFormat(DAY);
    return a === b ? `${a} (all day)` : `${a} - ${b} (all day)`;
  }
  const start = opts.start.setZone(opts.zone).setLocale('en-US');
  const end = opts.end.setZone(opts.zone).setLocale('en-US');
  const startAbbr = zoneAbbreviation(opts.zone, start);
  const endAbbr = zoneAbbreviation(opts.zone, end);
  const sameDay = start.hasSame(end, 'day');
  if (startAbbr !== endAbbr) {
    const endText = sameDay ? end.toFormat(TIME) : `${end.toFormat(DAY)} ${end.toFormat(TIME)}`;
    return `${start.toFormat(DAY)} ${start.toFormat(TIME)} ${startAbbr} - ${endText} ${endAbbr}`;
  }
  const endText = sameDay ? end.toFormat(TIME) : `${end.toFormat(DAY)} ${end.toFormat(TIME)}`;
  return `${start.toFormat(DAY)} ${start.toFormat(TIME)} - ${endText} (${startAbbr})`;
}
