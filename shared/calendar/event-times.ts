import { DateTime } from 'luxon';
import type { FieldErrors } from '../errors/app-error';
import { parseDateInput, resolveDay, resolveInstant } from './dates';

/**
 * How an event's times are stored. Timed events keep their instants. All-day events keep
 * calendar days as UTC midnights (first day, inclusive last day); `endsAt` is the real end
 * (midnight after the last day in the event's zone), which range filters use.
 */
export interface StoredTimes {
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
}

const utcIso = (dt: DateTime) => dt.toUTC().toISO() as string;

export function resolveEventTimes(input: TimesInput): { times: StoredTimes } | { errors: FieldErrors } {
  const startField = input.startField ?? 'date_start';
  const endField = input.endField ?? 'date_end';
  const start = parseDateInput(input.start);
  const end = parseDateInput(input.end);
  const errors: FieldErrors = {};
  if (!start) errors[startField] = [`The ${startField.replace(/_/g, ' ')} field must be a valid date.`];
  if (!end) errors[endField] = [`The ${endField.replace(/_/g, ' ')} field must be a valid date.`];
  if (!start || !end) return { errors };

  if (input.isAllDay) {
    const first = resolveDay(start, input.timezone);
    const last = resolveDay(end, input.timezone);
    if (last < first) return { errors: endBeforeStart(startField, endField) };
    return {
      times: {
        date_start: `${first}T00:00:00Z`,
        date_end: `${last}T00:00:00Z`,
        ends_at: utcIso(DateTime.fromISO(last, { zone: input.timezone }).plus({ days: 1 })),
      },
    };
  }
  const from = resolveInstant(start, input.timezone);
  const to = resolveInstant(end, input.timezone);
  if (to < from) return { errors: endBeforeStart(startField, endField) };
  return { times: { date_start: utcIso(from), date_end: utcIso(to), ends_at: utcIso(to) } };
}

function endBeforeStart(startField: string, endField: string): FieldErrors {
  return {
    [endField]: [`The ${endField.replace(/_/g, ' ')} field must be a date after or equal to ${startField.replace(/_/g, ' ')}.`],
  };
}
