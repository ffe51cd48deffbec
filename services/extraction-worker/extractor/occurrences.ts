import { DateTime } from 'luxon';
import type { Moment } from './date-phrases';
import type { Recurrence } from './recurrence-phrases';

const CODES = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];

type Day = { year: number; month: number; day: number };

/** Does the day fit the rule's BYDAY/BYMONTHDAY parts? */
function fits(r: Recurrence, d: DateTime): boolean {
  if (r.byMonthDay !== null) return d.day === r.byMonthDay;
  return r.byDay.some((part) => {
    const m = /^(-?\d)?([A-Z]{2})$/.exec(part);
    if (!m || CODES.indexOf(m[2]) !== d.weekday - 1) return false;
    const nth = m[1] ? Number(m[1]) : 0;
    if (nth > 0) return Math.ceil(d.day / 7) === nth;
    if (nth < 0) return d.day + 7 > (d.daysInMonth ?? 31);
    return true;
  });
}

/**
 * The first day, from the reference day on, that the rule allows and (for timed events)
 * whose start is not already past: "every Wednesday at 6pm" written on a Thursday starts
 * next Wednesday. Null when the rule names no particular days.
 */
export function firstOccurrence(r: Recurrence, time: Moment, zone: string, reference: Date, isAllDay: boolean): Day | null {
  if (!r.byDay.length && r.byMonthDay === null) return null;
  let day = DateTime.fromJSDate(reference, { zone }).startOf('day');
  for (let i = 0; i < 400; i++, day = day.plus({ days: 1 })) {
    if (!fits(r, day)) continue;
    if (!isAllDay && day.set({ hour: time.hour, minute: time.minute }).toMillis() < reference.getTime()) continue;
    return { year: day.year, month: day.month, day: day.day };
  }
  return null;
}
