import { type CalendarRow } from '../../../shared/events/event-rows';
import { sanitizeDescription } from '../../../shared/calendar/html';
import { normalizeReminders } from '../../../shared/mail/reminders';
import type { Knex } from '../../../shared/db/knex';
import { conflict, notFound, validationFailed } from '../../../shared/errors/app-error';
import { newUid, uidFromPublicId } from '../../../shared/ids/ids';
import { claimShortLink, replaceShortLink, retireShortLink } from '../public/short-links.repository';
import { findCalendar, hasLiveEvents, insertCalendar, listCalendars, softDeleteCalendar, updateCalendar as updateCalendarRow } from './calendars.repository';
import type { AppContext } from '../context';
import type { CalendarInput } from './calendars.schemas';

export const shortLinkTaken = () => validationFailed({ short_link: ['The short link has already been taken.'] });

const emptyToNull = (v: string | null | undefined) => (v === undefined ? undefined : v === '' ? null : v);

/** The team's calendar named by a `cal_` id; another team's id is as unknown as a made-up one. */
export async function requireCalendar(
  db: Knex,
  teamId: number,
  calPublicId: string,
  lock?: 'share' | 'update',
): Promise<CalendarRow> {
  const uid = uidFromPublicId('cal_', calPublicId);
  const row = uid ? await findCalendar(db, teamId, uid, lock) : undefined;
  if (!row) throw notFound('Calendar');
  return row;
}

export async function createCalendar(db: Knex, teamId: number, input: CalendarInput): Promise<CalendarRow> {
  return db.transaction(async (trx) => {
    const row = await insertCalendar(trx, {
      uid: newUid(),
      team_id: teamId,
      name: input.name,
      internal_name: emptyToNull(input.internal_name) ?? null,
      description: sanitizeDescription(input.description ?? ''),
      timezone: input.timezone,
      week_begins: input.week_begins ?? 1,
      locale: input.locale ?? null,
      short_link: emptyToNull(input.short_link) ?? null,
      ask_subscriber_details: input.ask_subscriber_details ?? false,
      feed_past_days: input.feed_past_days ?? null,
      feed_max_events: input.feed_max_events ?? null,
      organizer_name: emptyToNull(input.organizer_name) ?? null,
      organizer_email: emptyToNull(input.organizer_email) ?? null,
      default_email_reminders: normalizeReminders(input.default_email_reminders),
    });
    if (input.short_link && !(await claimShortLink(trx, input.short_link, { calendarId: row.id, teamId }))) throw shortLinkTaken();
    return row;
  });
}

type CalendarsDeps = Pick<AppContext, 'db' | 'caches'>;

export async function updateCalendar({ db, caches }: CalendarsDeps, teamId: number, calPublicId: string, input: CalendarInput): Promise<CalendarRow> {
  const updated = await db.transaction(async (trx) => {
    const current = await requireCalendar(trx, teamId, calPublicId, 'update');
    const changes: Partial<CalendarRow> = { name: input.name, timezone: input.timezone };
    if (input.internal_name !== undefined) changes.internal_name = emptyToNull(input.internal_name) ?? null;
    if (input.description !== undefined) changes.description = sanitizeDescription(input.description ?? '');
    if (input.week_begins !== undefined) changes.week_begins = input.week_begins;
    if (input.locale !== undefined) changes.locale = input.locale;
    if (input.ask_subscriber_details !== undefined) changes.ask_subscriber_details = input.ask_subscriber_details;
    if (input.feed_past_days !== undefined) changes.feed_past_days = input.feed_past_days;
    if (input.feed_max_events !== undefined) changes.feed_max_events = input.feed_max_events;
    if (input.organizer_name !== undefined) changes.organizer_name = emptyToNull(input.organizer_name) ?? null;
    if (input.organizer_email !== undefined) changes.organizer_email = emptyToNull(input.organizer_email) ?? null;
    if (input.default_email_reminders !== undefined) changes.default_email_reminders = normalizeReminders(input.default_email_reminders);
    if (input.short_link !== undefined) {
      const next = emptyToNull(input.short_link) ?? null;
      if (!(await replaceShortLink(trx, { calendarId: current.id, teamId }, current.short_link, next))) throw shortLinkTaken();
      changes.short_link = next;
    }
    return updateCalendarRow(trx, current.id, changes);
  });
  await caches.invalidate({ kind: 'calendar', id: updated.id });
  return updated;
}

export async function deleteCalendar({ db, caches }: CalendarsDeps, teamId: number, calPublicId: string): Promise<CalendarRow> {
  const deleted = await db.transaction(async (trx) => {
    // Locked so no event can be added between the check and the delete (creators take a share lock).
    const current = await requireCalendar(trx, teamId, calPublicId, 'update');
    if (await hasLiveEvents(trx, current.id)) {
      throw conflict('The calendar still has events; delete them first.');
    }
    await retireShortLink(trx, { calendarId: current.id });
    await softDeleteCalendar(trx, current.id);
    return current;
  });
  await caches.invalidate({ kind: 'calendar', id: deleted.id });
  return deleted;
}

/** The team's calendars, oldest first. */
export const teamCalendars = (deps: Pick<AppContext, 'db'>, teamId: number) => listCalendars(deps.db, teamId);
