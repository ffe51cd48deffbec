import type { FieldErrors } from '../../../shared/errors/app-error';
import { LAST_INSTANT_MS, parseDateInput, resolveDay, resolveEpochMs, wallTimeToEpoch } from '../../../shared/calendar/dates';

/**
 * How an event's times are stored. Timed events keep their instants. All-day events keep
 * calendar days as UTC midnights (first day, inclusive last day); `ends_at` is the real end
 * (midnight after the last day in the event's zone), which range filters use.
 */
interface StoredTimes {
  date_start: string;
  date_end: string;
  ends_at: string;
}

export interface TimesInput {
  isAllDay: boolean;
  start: string;
  end: string;
  timezone: string;
  /** Field names for error messages (`date_start` in the API, `start` in smart links). */
  startField?: string;
  endField?: string;
  /**
   * The end was worked out from the start and a duration, not sent: an end past the last
   * day we store is then the start's problem, and the message says so.
   */
  endFromStart?: boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();
const FOUR_DIGIT_DAY = /^\d{4}-\d{2}-\d{2}$/;

export function resolveEventTimes(input: TimesInput): { times: StoredTimes } | { errors: FieldErrors } {
  const startField = input.startField ?? 'date_start';
  const endField = input.endField ?? 'date_end';
  const start = parseDateInput(input.start);
  const end = parseDateInput(input.end);
  const errors: FieldErrors = {};
  if (!start) errors[startField] = [`The ${startField.replace(/_/g, ' ')} field must be a valid date.`];
  if (start && !end && input.endFromStart) return { errors: noRoomForDuration(startField) };
  if (!end) errors[endField] = [`The ${endField.replace(/_/g, ' ')} field must be a valid date.`];
  if (!start || !end) return { errors };

  if (input.isAllDay) {
    const first = resolveDay(start, input.timezone);
    const last = resolveDay(end, input.timezone);
    // A time late on 31 December 9999 with an offset is a day of the year 10000 (and its
    // five-digit year would also sort wrongly as text).
    const lateField = !FOUR_DIGIT_DAY.test(first) ? startField : !FOUR_DIGIT_DAY.test(last) ? endField : null;
    if (lateField) return { errors: tooLate(lateField) };
    if (last < first) return { errors: endBeforeStart(startField, endField) };
    const [y, m, d] = last.split('-').map(Number);
    const next = new Date(Date.UTC(y, m - 1, d + 1));
    const endsAt = wallTimeToEpoch({ year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate() }, input.timezone);
    if (endsAt > LAST_INSTANT_MS) return { errors: tooLate(endField) };
    return { times: { date_start: `${first}T00:00:00Z`, date_end: `${last}T00:00:00Z`, ends_at: iso(endsAt) } };
  }
  const from = resolveEpochMs(start, input.timezone);
  const to = resolveEpochMs(end, input.timezone);
  if (to < from) return { errors: endBeforeStart(startField, endField) };
  if (to > LAST_INSTANT_MS) return { errors: from > LAST_INSTANT_MS ? tooLate(startField) : input.endFromStart ? noRoomForDuration(startField) : tooLate(endField) };
  const endIso = iso(to);
  return { times: { date_start: iso(from), date_end: endIso, ends_at: endIso } };
}

function tooLate(field: string): FieldErrors {
  return { [field]: [`The ${field.replace(/_/g, ' ')} field must be a date before the year 10000.`] };
}

function noRoomForDuration(startField: string): FieldErrors {
  return { [startField]: [`The ${startField.replace(/_/g, ' ')} field must leave room for the event's duration before the year 10000.`] };
}

function endBeforeStart(startField: string, endField: string): FieldErrors {
  return {
    [endField]: [`The ${endField.replace(/_/g, ' ')} field must be a date after or equal to ${startField.replace(/_/g, ' ')}.`],
  };
}

/** An ISO instant `minutes` after a parsed start (durations are absolute time). */
export function plusMinutesIso(start: NonNullable<ReturnType<typeof parseDateInput>>, zone: string, minutes: number): string {
  return iso(resolveEpochMs(start, zone) + minutes * 60_000);
}

/**
 * The inclusive last day of an all-day event that lasts `minutes` from a parsed start: whole
 * days, ceil(minutes / 1440), at least one (2880 → the start day and the next). Past the
 * year 9999 the answer is not a date input, which the caller reports as no room for the
 * duration.
 */
export function lastDayAfterMinutes(start: NonNullable<ReturnType<typeof parseDateInput>>, zone: string, minutes: number): string {
  const [y, m, d] = resolveDay(start, zone).split('-').map(Number);
  const days = Math.max(1, Math.ceil(minutes / 1440));
  const last = new Date(Date.UTC(y, m - 1, d + days - 1));
  return `${String(last.getUTCFullYear()).padStart(4, '0')}-${String(last.getUTCMonth() + 1).padStart(2, '0')}-${String(last.getUTCDate()).padStart(2, '0')}`;
}
