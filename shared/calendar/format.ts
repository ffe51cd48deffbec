import { type WallClock, wallClock, zoneAbbreviation } from './time-zones';

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Tue Mar 10, 2026` */
const formatDay = (w: WallClock) => `${WEEKDAYS[w.weekday]} ${MONTHS[w.month - 1]} ${w.day}, ${w.year}`;

/** `1:05 PM` */
function formatTime(w: WallClock): string {
  const h12 = w.hour % 12 === 0 ? 12 : w.hour % 12;
  return `${h12}:${String(w.minute).padStart(2, '0')} ${w.hour < 12 ? 'AM' : 'PM'}`;
}

const sameDay = (a: WallClock, b: WallClock) => a.year === b.year && a.month === b.month && a.day === b.day;

/**
 * Human-readable range: `Tue Mar 10, 2026 1:00 PM - 2:30 PM (EDT)`; all-day ranges take
 * calendar days (stored as UTC midnights) and end with `(all day)`.
 */
export function formatDateRange(opts: {
  isAllDay: boolean;
  startMs: number;
  endMs: number;
  zone: string;
  /** The wall clocks in `zone` when the caller has them already. */
  start?: WallClock;
  end?: WallClock;
}): string {
  if (opts.isAllDay) {
    const a = formatDay(wallClock(opts.startMs, 'UTC'));
    const b = formatDay(wallClock(opts.endMs, 'UTC'));
    return a === b ? `${a} (all day)` : `${a} - ${b} (all day)`;
  }
  const start = opts.start ?? wallClock(opts.startMs, opts.zone);
  const end = opts.end ?? wallClock(opts.endMs, opts.zone);
  const startAbbr = zoneAbbreviation(opts.zone, opts.startMs, start.offsetMinutes);
  const endAbbr = zoneAbbreviation(opts.zone, opts.endMs, end.offsetMinutes);
  const endText = sameDay(start, end) ? formatTime(end) : `${formatDay(end)} ${formatTime(end)}`;
  if (startAbbr !== endAbbr) return `${formatDay(start)} ${formatTime(start)} ${startAbbr} - ${endText} ${endAbbr}`;
  return `${formatDay(start)} ${formatTime(start)} - ${endText} (${startAbbr})`;
}
