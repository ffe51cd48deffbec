import { type CalendarRow, type EventRow, type EventWithCalendar } from '../../../shared/events/event-rows';
import { toEventJson } from '../../../shared/events/event-json';
import { DateTime } from 'luxon';
import { isRowId, Listing } from '../http/cursor';
import { LAST_INSTANT_MS, parseDateInput, resolveDay, resolveEpochMs } from '../../../shared/calendar/dates';
import { plusMinutesIso, resolveEventTimes, type TimesInput } from '../calendar/event-times';
import { sanitizeDescription } from '../../../shared/calendar/html';
import { normalizeUntil } from '../../../shared/calendar/recurrence';
import type { Knex } from '../../../shared/db/knex';
import { notFound, validationFailed } from '../../../shared/errors/app-error';
import { newUid, uidFromPublicId } from '../../../shared/ids/ids';
import { nextReminder, normalizeReminders, reminderColumns, scheduleFrom, storeNextReminder } from '../../../shared/mail/reminders';
import { queueReminder, reminderJob } from '../../../shared/queues/reminder.job';
import { eventLimitErrorFrom, periodOf, usageKey } from '../../../shared/usage/event-limit';
import { findCalendar, insertCalendar, oldestCalendar } from '../calendars/calendars.repository';
import { shortLinkTaken } from '../calendars/calendars.service';
import type { AppContext } from '../context';
import { recordWebhookEvent } from '../../../shared/webhooks/outbox';
import type { WebhookEventType } from '../../../shared/webhooks/event-types';
import { hasMailAudience, queueInviteMail } from '../invites/invite-mail.queue';
import { raiseSequence } from '../invites/invites.repository';
import { reclaimRetiredShortLink, replaceShortLink } from '../public/short-links.repository';
import { hashAccessCode, verifyAccessCode } from './access-code';
import { findEvent, insertEventTakingSlot, listEvents as listEventRows, softDeleteEvent, updateEvent as updateEventRow } from './events.repository';
import type { EventInput, ListEventsQuery, SimpleEventInput } from './events.schemas';

type EventsDeps = Pick<AppContext, 'db' | 'clock' | 'caches' | 'config' | 'queues' | 'counters' | 'logger'>;

const OPTIONAL_TEXT = ['internal_name', 'location', 'series_title', 'location_url', 'image_url', 'recurrence_rule'] as const;

const blankToNull = (v: string | null | undefined): string | null | undefined => (v === '' ? null : v);

/**
 * The stored values for a create (no `current`) or a PUT (merged over `current`: omitted
 * optional fields keep their value, explicit nulls clear them). Throws 422 on bad dates.
 */
async function eventValues(
  input: EventInput,
  current?: EventRow,
  fields: Pick<TimesInput, 'startField' | 'endField' | 'endFromStart'> = { startField: 'date_start', endField: 'date_end' },
): Promise<Partial<EventRow>> {
  const isAllDay = input.is_all_day ?? current?.is_all_day ?? false;
  const timing = resolveEventTimes({
    isAllDay,
    start: input.date_start as string,
    end: input.date_end as string,
    timezone: input.timezone as string,
    ...fields,
  });
  if ('errors' in timing) throw validationFailed(timing.errors);

  const values: Partial<EventRow> = {
    title: input.title,
    timezone: input.timezone,
    is_all_day: isAllDay,
    ...timing.times,
  };
  for (const key of OPTIONAL_TEXT) {
    const v = blankToNull(input[key]);
    if (v !== undefined) values[key] = v;
    else if (!current) values[key] = null;
  }
  // The rule sent, or the one kept, fitted to the event's start as it is now (timed or all-day, its zone).
  const rule = values.recurrence_rule !== undefined ? values.recurrence_rule : current?.recurrence_rule;
  if (rule) values.recurrence_rule = normalizeUntil(rule, { isAllDay, timezone: input.timezone as string });
  if (input.description !== undefined) values.description = input.description ? sanitizeDescription(input.description) || null : null;
  else if (!current) values.description = null;
  for (const key of ['is_draft', 'has_rsvp'] as const) {
    if (input[key] !== undefined) values[key] = input[key];
  }
  for (const key of ['reminder_before', 'rsvp_limit'] as const) {
    if (input[key] !== undefined) values[key] = input[key];
    else if (!current) values[key] = null;
  }
  if (input.busy_type !== undefined) values.busy_type = input.busy_type || null;
  else if (!current) values.busy_type = null;
  // Omitted on create: the calendar's default (insertEventTakingSlot); on update: kept.
  if (input.email_reminders !== undefined) values.email_reminders = normalizeReminders(input.email_reminders);
  if (input.access_code !== undefined) values.access_code_hash = await accessCodeHash(input.access_code, current?.access_code_hash ?? null);
  return values;
}

/**
 * The hash to store for the code sent: none for null; the stored one when the code is the
 * same, so that sending it again revokes nothing; else a new salted hash, which revokes every
 * signed URL and unlock made for the code before (their MACs cover the hash).
 */
async function accessCodeHash(code: string | null, stored: string | null): Promise<string | null> {
  if (code === null) return null;
  if (stored && (await verifyAccessCode(code, stored))) return stored;
  return hashAccessCode(code);
}

const isShortLinkConflict = (err: unknown) =>
  (err as { code?: string; constraint?: string })?.code === '23505' && (err as { constraint?: string }).constraint === 'short_links_pkey';

/**
 * Inserts an event into the team's calendar and spends one slot of the monthly allowance:
 * one statement when nothing else is to commit with it, else a transaction that also plans
 * its first reminder and tells the team's webhooks (insertEventTakingSlot). `missing` makes the error thrown when the calendar does not exist (made
 * only then: an error captures a stack trace, no cost for the hot path to pay).
 */
async function insertNewEvent(
  deps: EventsDeps,
  teamId: number,
  calendarUid: string,
  values: Partial<EventRow>,
  missing: () => Error,
): Promise<EventWithCalendar> {
  const period = periodOf(deps.clock.now());
  const insert = async (db: Knex) => {
    const fresh = { teamId, calendarUid, period, values: { ...values, uid: newUid(), team_id: teamId, status: 'approved' as const } };
    // Usually the event alone, one statement; with a webhook to tell or a reminder to plan,
    // the statement writes nothing and the event is made in a transaction with those.
    const alone = await insertEventTakingSlot(db, { ...fresh, alone: true });
    if (alone !== 'deferred') return alone;
    return db.transaction(async (trx) => {
      const row = await insertEventTakingSlot(trx, fresh);
      if (!row || row === 'deferred') return undefined;
      // Its first reminder, if it has any (a time already past when it is made is not sent).
      const slot = nextReminder(row.event, deps.clock.now().getTime());
      if (slot) {
        await storeNextReminder(trx, row.event.id, slot);
        Object.assign(row.event, reminderColumns(slot));
      }
      await announce(trx, deps, 'event.created', row);
      return row;
    });
  };
  try {
    let inserted;
    try {
      inserted = await insert(deps.db);
    } catch (err) {
      // The slug is in use, or retired: a slug the team itself retired is its to take again
      // (off the hot path, in one transaction so no one else takes it in between).
      const slug = values.short_link;
      if (!isShortLinkConflict(err) || !slug) throw err;
      inserted = await deps.db.transaction(async (trx) => {
        if (!(await reclaimRetiredShortLink(trx, slug, teamId))) throw err;
        return insert(trx);
      });
    }
    if (!inserted) throw missing();
    const { counted, listening: _listening, ...created } = inserted;
    if (!counted) deps.counters.eventsCreated.add(usageKey(teamId, period));
    await deps.caches.invalidate({ kind: 'calendar-events', id: created.calendar.id });
    await planReminder(deps, created.event);
    return created;
  } catch (err) {
    if (isShortLinkConflict(err)) throw shortLinkTaken();
    throw eventLimitErrorFrom(err) ?? err;
  }
}

/**
 * Tells the team's webhooks, in the transaction of the change (see shared/webhooks/outbox.ts).
 * `listening` false (asked in the statement that read or wrote the event): no webhook of the
 * team wants this type, and no message is built.
 */
const announce = async (trx: Knex, deps: EventsDeps, type: WebhookEventType, found: EventWithCalendar & { listening?: boolean }) => {
  if (found.listening === false) return;
  await recordWebhookEvent(trx, {
    teamId: found.event.team_id,
    type,
    resource: `event:${found.event.uid}`,
    data: toEventJson(found, deps.config.publicBaseUrl),
    at: deps.clock.now(),
  });
};

export async function createEvent(deps: EventsDeps, teamId: number, calPublicId: string, input: EventInput): Promise<EventWithCalendar> {
  const calendarUid = uidFromPublicId('cal_', calPublicId);
  if (!calendarUid) throw notFound('Calendar');
  const values = await eventValues(input);
  values.short_link = blankToNull(input.short_link) ?? null;
  return insertNewEvent(deps, teamId, calendarUid, values, () => notFound('Calendar'));
}

/**
 * `POST /api/events`: fills in the calendar, the zone, the end and the all-day flag. A team
 * without a calendar gets its first one only once the event's own values are known good,
 * so a refused request leaves nothing behind.
 */
export async function createSimpleEvent(deps: EventsDeps, teamId: number, input: SimpleEventInput): Promise<EventWithCalendar> {
  const start = parseDateInput(input.start);
  if (!start) throw validationFailed({ start: ['The start field must be a valid date.'] });
  const isAllDay = input.is_all_day ?? start.kind === 'date';
  const invalidCalendar = () => validationFailed({ calendar: ['The calendar field must be the id (cal_…) of one of your calendars.'] });

  const existing = await simpleEventCalendar(deps.db, teamId, input, invalidCalendar);
  // A new "My Calendar" takes the event's zone (else UTC).
  const zone = input.timezone ?? existing?.timezone ?? 'UTC';
  let end = input.end;
  if (end === undefined) {
    end = isAllDay
      ? resolveDay(start, zone)
      : plusMinutesIso(start, zone, 60);
  }
  const full: EventInput = { ...input, is_all_day: isAllDay, date_start: input.start, date_end: end, timezone: zone };
  const values = await eventValues(full, undefined, { startField: 'start', endField: 'end', endFromStart: input.end === undefined });
  values.short_link = blankToNull(input.short_link) ?? null;
  if (existing) return insertNewEvent(deps, teamId, existing.uid, values, invalidCalendar);
  // The first calendar and its event commit together: an event refused at this point (the
  // monthly limit) leaves no calendar behind.
  return deps.db.transaction(async (trx) => {
    const calendar = await firstCalendar(trx, teamId, zone);
    return insertNewEvent({ ...deps, db: trx }, teamId, calendar.uid, values, invalidCalendar);
  });
}

/** The calendar the request names (422 when it is not the team's), else the team's oldest, if any. */
async function simpleEventCalendar(db: Knex, teamId: number, input: SimpleEventInput, invalid: () => Error): Promise<CalendarRow | undefined> {
  if (input.calendar !== undefined) {
    const uid = uidFromPublicId('cal_', input.calendar);
    const found = uid ? await findCalendar(db, teamId, uid) : undefined;
    if (!found) throw invalid();
    return found;
  }
  return oldestCalendar(db, teamId);
}

/**
 * The team's first calendar, "My Calendar", in the caller's transaction; serialized per team
 * (until that transaction ends) so two first events do not make two.
 */
async function firstCalendar(trx: Knex, teamId: number, timezone: string): Promise<CalendarRow> {
  await trx.raw('SELECT pg_advisory_xact_lock(?::bigint)', [teamId]);
  return (
    (await oldestCalendar(trx, teamId)) ??
    insertCalendar(trx, { uid: newUid(), team_id: teamId, name: 'My Calendar', description: '', timezone, week_begins: 1 })
  );
}

/** The team's live event; with a calendar id, only when it belongs to that calendar. */
export async function requireEvent(
  db: Knex,
  teamId: number,
  evtPublicId: string,
  opts: { calPublicId?: string; lock?: boolean; listensFor?: WebhookEventType } = {},
): Promise<EventWithCalendar & { listening?: boolean }> {
  const uid = uidFromPublicId('evt_', evtPublicId);
  let calendarUid: string | undefined;
  if (opts.calPublicId !== undefined) {
    const cal = uidFromPublicId('cal_', opts.calPublicId);
    if (!cal) throw notFound('Event');
    calendarUid = cal;
  }
  const found = uid ? await findEvent(db, teamId, uid, { calendarUid, lock: opts.lock, listensFor: opts.listensFor }) : undefined;
  if (!found) throw notFound('Event');
  return found;
}

/**
 * A read outside any transaction (GET): served from the event cache when it is live.
 * Writes invalidate the cache in every gateway, so what it answers is current.
 */
export async function readEvent(deps: EventsDeps, teamId: number, evtPublicId: string, calPublicId?: string): Promise<EventWithCalendar> {
  const uid = uidFromPublicId('evt_', evtPublicId);
  const cached = uid ? deps.caches.events.get(uid) : undefined;
  if (cached) {
    const calendarMatches = calPublicId === undefined || calPublicId === `cal_${cached.calendar.uid}`;
    if (cached.event.team_id !== teamId || !calendarMatches) throw notFound('Event');
    return cached;
  }
  const startedAt = deps.caches.events.begin();
  const found = await requireEvent(deps.db, teamId, evtPublicId, { calPublicId });
  deps.caches.events.set(found.event.uid, found, startedAt);
  return found;
}

export async function updateEvent(
  deps: EventsDeps,
  teamId: number,
  calPublicId: string,
  evtPublicId: string,
  input: EventInput,
  opts: { requestId?: string } = {},
): Promise<EventWithCalendar> {
  const updated = await deps.db.transaction(async (trx) => {
    const current = await requireEvent(trx, teamId, evtPublicId, { calPublicId, lock: true, listensFor: 'event.updated' });
    const values = await eventValues(input, current.event);
    if (input.short_link !== undefined) {
      const next = blankToNull(input.short_link) ?? null;
      if (!(await replaceShortLink(trx, { eventId: current.event.id, teamId }, current.event.short_link, next))) throw shortLinkTaken();
      values.short_link = next;
    }
    values.sequence = current.event.sequence + 1;
    // The next reminder for the event as it will be: a moved event's old one is never sent.
    const next = nextReminder({ ...current.event, ...values }, scheduleFrom(current.event.next_reminder_at, deps.clock.now().getTime()));
    Object.assign(values, reminderColumns(next));
    const event = await updateEventRow(trx, current.event.id, values);
    const found = { event, calendar: current.calendar };
    await announce(trx, deps, 'event.updated', { ...found, listening: current.listening });
    // Every update raises SEQUENCE (above), so the update each invitee gets outranks all they had.
    // Those whose yes or maybe put the event in their calendar get it too.
    if (input.send_invite_updates && hasMailAudience(event)) {
      await queueInviteMail(trx, deps, { found, kind: 'update', sequence: event.sequence, withRsvps: true, requestId: opts.requestId });
    }
    return found;
  });
  await deps.caches.invalidate({ kind: 'event', uid: updated.event.uid }, { kind: 'calendar-events', id: updated.calendar.id });
  await planReminder(deps, updated.event);
  return updated;
}

/** The event's next reminder (if it has one) as a job due when it is, once the change is committed (see queueReminder). */
const planReminder = async (deps: EventsDeps, event: { uid: string; next_reminder_at: string | null }) => {
  if (event.next_reminder_at !== null) await queueReminder(deps.queues.producer(reminderJob), event, deps.clock.now().getTime(), deps.logger);
};

/**
 * Approval of events from smart links that require it: pending (and rejected) events stay
 * off every public surface; approving publishes, rejecting withdraws.
 */
export async function setEventStatus(deps: EventsDeps, teamId: number, evtPublicId: string, status: 'approved' | 'rejected'): Promise<EventWithCalendar> {
  const updated = await deps.db.transaction(async (trx) => {
    const type = status === 'approved' ? 'event.approved' : 'event.rejected';
    const current = await requireEvent(trx, teamId, evtPublicId, { lock: true, listensFor: type });
    if (current.event.status === status) return current;
    const found = { event: await updateEventRow(trx, current.event.id, { status }), calendar: current.calendar };
    await announce(trx, deps, type, { ...found, listening: current.listening });
    return found;
  });
  await deps.caches.invalidate({ kind: 'event', uid: updated.event.uid }, { kind: 'calendar-events', id: updated.calendar.id });
  return updated;
}

interface DeleteResult {
  publicId: string;
  inviteesNotified: number;
}

export async function deleteEvent(
  deps: EventsDeps,
  teamId: number,
  evtPublicId: string,
  opts: { calPublicId?: string; notifyInvitees: boolean; requestId?: string },
): Promise<DeleteResult> {
  const result = await deps.db.transaction(async (trx) => {
    const current = await requireEvent(trx, teamId, evtPublicId, { calPublicId: opts.calPublicId, lock: true, listensFor: 'event.deleted' });
    let inviteesNotified = 0;
    if (opts.notifyInvitees && hasMailAudience(current.event)) {
      // The cancellation outranks every message sent so far, updates and per-invitee ones alike;
      // it goes to the invitees and to everyone who answered yes or maybe.
      const sequence = await raiseSequence(trx, current.event.id);
      inviteesNotified = await queueInviteMail(trx, deps, { found: current, kind: 'cancellation', sequence, withRsvps: true, requestId: opts.requestId });
    }
    await softDeleteEvent(trx, current.event.id);
    await announce(trx, deps, 'event.deleted', current);
    return { uid: current.event.uid, calendarId: current.calendar.id, inviteesNotified };
  });
  await deps.caches.invalidate({ kind: 'event', uid: result.uid }, { kind: 'calendar-events', id: result.calendarId });
  return { publicId: `evt_${result.uid}`, inviteesNotified: result.inviteesNotified };
}

interface EventPage {
  rows: EventWithCalendar[];
  nextCursor: string | null;
}


// Cursors are made from stored instants; a forged one must still be a timestamp Postgres reads.
const storableInstant = (dt: DateTime) => dt.isValid && dt.year >= 1 && dt.toMillis() <= LAST_INSTANT_MS;

/** The events listing: by start, then id. */
export const EVENTS = new Listing<[string, number]>('events', (v): v is [string, number] => v.length === 2 && typeof v[0] === 'string' && isRowId(v[1]) && storableInstant(DateTime.fromSQL(v[0])));

const filterInstant = (value: string | undefined) => {
  if (value === undefined) return undefined;
  const parsed = parseDateInput(value);
  // A bound past the last storable instant filters like the last instant itself.
  return parsed ? new Date(Math.min(resolveEpochMs(parsed, 'UTC'), LAST_INSTANT_MS)).toISOString() : undefined;
};

export async function listEvents(deps: EventsDeps, teamId: number, query: ListEventsQuery, calPublicId?: string): Promise<EventPage> {
  const key = EVENTS.after(deps.config.appKey, query.cursor);
  const after = key && { dateStart: key[0], id: key[1] };
  let calendarId: number | undefined;
  const calendarRef = calPublicId ?? query.calendar;
  if (calendarRef !== undefined) {
    const uid = uidFromPublicId('cal_', calendarRef);
    const cal = uid ? await findCalendar(deps.db, teamId, uid) : undefined;
    if (!cal) {
      if (calPublicId !== undefined) throw notFound('Calendar');
      return { rows: [], nextCursor: null };
    }
    // On a calendar's own path the calendar filter still applies: an event is in one calendar,
    // so naming another one matches nothing.
    if (calPublicId !== undefined && query.calendar !== undefined && uidFromPublicId('cal_', query.calendar) !== cal.uid) {
      return { rows: [], nextCursor: null };
    }
    calendarId = cal.id;
  }
  const rows = await listEventRows(deps.db, {
    teamId,
    calendarId,
    range: query.range,
    now: deps.clock.now().toISOString(),
    search: query.search || undefined,
    startFrom: filterInstant(query.start_date),
    endBy: filterInstant(query.end_date),
    rsvp: query.rsvp,
    invites: query.invites,
    status: query.status,
    after,
    limit: EVENTS.fetchLimit(query.per_page),
  });
  return EVENTS.page(deps.config.appKey, rows, query.per_page, ({ event }) => [event.date_start, event.id]);
}
