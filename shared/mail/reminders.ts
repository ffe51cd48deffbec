import { RRule } from 'rrule';
import { pgTimestampToMillis, wallTimeToEpoch } from '../calendar/dates';
import { wallClock } from '../calendar/time-zones';
import type { Knex } from '../db/knex';

/**
 * When an event's email reminders are due: `email_reminders` minutes before the start of each
 * of its occurrences (one for a single event, each date of a repeating one). Only the next
 * one is ever computed and stored (events.next_reminder_at, with its occurrence and offset),
 * in the transaction of each change of the event and by the sweep that sends it; see
 * docs/email.md, "Reminders".
 */

/** The most offsets an event has, and the largest (four weeks, in minutes). */
export const EMAIL_REMINDERS = { max: 5, maxMinutes: 40_320 } as const;

/** The columns the schedule is computed from. */
export interface ReminderEvent {
  date_start: string;
  date_end: string;
  is_all_day: boolean;
  timezone: string;
  recurrence_rule: string | null;
  email_reminders: number[];
}

/** One date of the event: its real start, and its start and end as the event's own columns show them (all-day: UTC midnights of its days). */
export interface Occurrence {
  startMs: number;
  shown: { startMs: number; endMs: number };
}

/** The next reminder: when it is due, for which occurrence (its real start) and how many minutes before it. */
interface ReminderSlot {
  at: Date;
  occurrence: Date;
  minutes: number;
}

const MINUTE = 60_000;
const DAY = 86_400_000;
/** Occurrences looked at per question: a rule that repeats every minute still answers in bounded time. */
const MAX_STEPS = 2000;

/** A wall time written as if it were UTC ("floating"), as rrule computes in. */
function toFloating(ms: number, zone: string): number {
  const w = wallClock(ms, zone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}

function fromFloating(floating: number, zone: string): number {
  const d = new Date(floating);
  return wallTimeToEpoch(
    { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() },
    zone,
  );
}

/**
 * The event's occurrences that start after `afterMs`, in order, at most `limit`. Times are
 * wall times in the event's zone (a weekly 9:00 stays 9:00 across a change of clocks); an
 * all-day date starts at midnight there. A rule rrule cannot read has no occurrence.
 */
function occurrencesAfter(e: ReminderEvent, afterMs: number, limit: number): Occurrence[] {
  const storedStart = pgTimestampToMillis(e.date_start);
  const length = pgTimestampToMillis(e.date_end) - storedStart;
  // The stored start as a floating time: all-day dates are stored as UTC midnights already.
  const floatingStart = e.is_all_day ? storedStart : toFloating(storedStart, e.timezone);
  const occurrence = (floating: number): Occurrence => {
    const startMs = fromFloating(floating, e.timezone);
    const shownStart = e.is_all_day ? floating : startMs;
    return { startMs, shown: { startMs: shownStart, endMs: shownStart + length } };
  };
  if (!e.recurrence_rule) {
    const only = occurrence(floatingStart);
    return only.startMs > afterMs && limit > 0 ? [only] : [];
  }
  let rule: RRule;
  try {
    const options = RRule.parseString(e.recurrence_rule);
    // A timed event's UNTIL is UTC (RFC 5545): as a floating time like the rest.
    if (options.until && !e.is_all_day) options.until = new Date(toFloating(options.until.getTime(), e.timezone));
    rule = new RRule({ ...options, dtstart: new Date(floatingStart) });
  } catch {
    return [];
  }
  const found: Occurrence[] = [];
  // A day of slack either side of the zone's offset, then exact by real instants.
  let cursor: Date | null = new Date(Math.max(floatingStart, toFloating(afterMs, e.timezone) - DAY));
  let inclusive = true;
  for (let steps = 0; cursor && found.length < limit && steps < MAX_STEPS; steps++) {
    cursor = rule.after(cursor, inclusive);
    inclusive = false;
    if (!cursor) break;
    const next = occurrence(cursor.getTime());
    if (next.startMs > afterMs) found.push(next);
  }
  return found;
}

/** The first reminder due after `afterMs` (null: none: no offsets, or no occurrence left). */
export function nextReminder(e: ReminderEvent, afterMs: number): ReminderSlot | null {
  let best: ReminderSlot | null = null;
  for (const minutes of e.email_reminders) {
    const [first] = occurrencesAfter(e, afterMs + minutes * MINUTE, 1);
    if (!first) continue;
    const at = first.startMs - minutes * MINUTE;
    if (!best || at < best.at.getTime() || (at === best.at.getTime() && minutes < best.minutes)) {
      best = { at: new Date(at), occurrence: new Date(first.startMs), minutes };
    }
  }
  return best;
}

/**
 * The reminders to send now: of those due from `fromMs` (the stored next one) to `nowMs`,
 * only for occurrences not yet started (a reminder is never sent for an event under way),
 * and one per occurrence, the last due (with reminders a day and an hour before, a worker
 * back after a day's outage sends the hour's alone).
 */
export function dueReminders(e: ReminderEvent, fromMs: number, nowMs: number): Array<{ occurrence: Occurrence; minutes: number }> {
  if (!e.email_reminders.length) return [];
  const longest = Math.max(...e.email_reminders) * MINUTE;
  const due: Array<{ occurrence: Occurrence; minutes: number }> = [];
  for (const occurrence of occurrencesAfter(e, nowMs, 50)) {
    if (occurrence.startMs - longest > nowMs) break;
    const minutes = e.email_reminders
      .filter((m) => {
        const at = occurrence.startMs - m * MINUTE;
        return at >= fromMs && at <= nowMs;
      })
      .sort((a, b) => a - b)[0];
    if (minutes !== undefined) due.push({ occurrence, minutes });
  }
  return due;
}

/**
 * Where the next reminder is computed from when the event is written at `nowMs`: now (a
 * reminder whose time has passed when the event is saved is not sent), unless the stored
 * one is already due and not yet swept, which then stays due (its occurrence, if it moved,
 * is computed again: see dueReminders).
 */
export const scheduleFrom = (storedNextAt: string | Date | null, nowMs: number): number => {
  const stored = storedNextAt === null ? null : storedNextAt instanceof Date ? storedNextAt.getTime() : pgTimestampToMillis(storedNextAt);
  return stored !== null && stored <= nowMs ? stored - 1 : nowMs;
};

/** The columns that store a slot (all null: nothing to send). */
export function reminderColumns(slot: ReminderSlot | null): { next_reminder_at: string | null; next_reminder_occurrence: string | null; next_reminder_minutes: number | null } {
  return {
    next_reminder_at: slot ? slot.at.toISOString() : null,
    next_reminder_occurrence: slot ? slot.occurrence.toISOString() : null,
    next_reminder_minutes: slot ? slot.minutes : null,
  };
}

/** Stores the event's next reminder (in the caller's transaction, which holds the event row). */
export async function storeNextReminder(db: Knex, eventId: number, slot: ReminderSlot | null): Promise<void> {
  await db('events').where({ id: eventId }).update(reminderColumns(slot));
}

/** Offsets as stored: distinct, largest first. */
export const normalizeReminders = (minutes: number[] | null | undefined): number[] => [...new Set(minutes ?? [])].sort((a, b) => b - a);
