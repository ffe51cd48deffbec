import type { Knex } from '../../../shared/db/knex';
import type { MailKind } from '../../../shared/queues/mail.job';
import type { NewDelivery } from '../../../shared/mail/queue-mail';
import { INVITEE_COLUMNS, INVITEES_WITH_LAST_DELIVERY, type InviteeRow, type InviteeWithDelivery } from '../../../shared/invites/invitee-json';


/** Inserts invitees; an email already invited to the event (any case) is skipped. */
export async function insertInvitees(
  db: Knex,
  rows: Array<Pick<InviteeRow, 'uid' | 'team_id' | 'event_id' | 'email' | 'name'>>,
): Promise<InviteeRow[]> {
  if (!rows.length) return [];
  return db('invitees')
    .insert(rows)
    .onConflict(db.raw('(event_id, lower(email))'))
    .ignore()
    .returning([...INVITEE_COLUMNS]);
}

/** The event's invitees among these emails (compared case-insensitively). */
export async function findInviteesByEmail(db: Knex, eventId: number, emails: string[]): Promise<InviteeRow[]> {
  if (!emails.length) return [];
  return db('invitees')
    .select([...INVITEE_COLUMNS])
    .where({ event_id: eventId })
    .whereRaw('lower(email) = ANY(?::text[])', [emails.map((e) => e.toLowerCase())]);
}

export async function findInvitee(db: Knex, eventId: number, uid: string): Promise<InviteeRow | undefined> {
  return db('invitees').first([...INVITEE_COLUMNS]).where({ event_id: eventId, uid });
}

export async function deleteInvitee(db: Knex, id: number): Promise<void> {
  await db('invitees').where({ id }).delete();
}

export async function hasInvitees(db: Knex, eventId: number): Promise<boolean> {
  return (await db('invitees').first('id').where({ event_id: eventId })) !== undefined;
}

/** The highest SEQUENCE any message for this event has carried to these emails (-1: none). */
export async function maxSentSequence(db: Knex, eventId: number, emails: string[]): Promise<number> {
  if (!emails.length) return -1;
  const row = await db('deliveries')
    .max<{ max: number | null }>('sequence as max')
    .where({ event_id: eventId })
    .whereRaw('lower(email) = ANY(?::text[])', [emails.map((e) => e.toLowerCase())])
    .first();
  return row?.max ?? -1;
}

/**
 * Raises the event's SEQUENCE (to at least `atLeast`) and answers the new value. Every
 * message carries the event's SEQUENCE at the time it was made, so raising it for each
 * update and cancellation keeps what invitees receive strictly increasing.
 */
export async function raiseSequence(db: Knex, eventId: number, atLeast = 0): Promise<number> {
  const [row] = await db('events')
    .where({ id: eventId })
    .update({ sequence: db.raw('GREATEST(sequence + 1, ?::int)', [atLeast]) })
    .returning(['sequence']);
  return row.sequence;
}

export async function setHasCalendarInvites(db: Knex, eventId: number, value: boolean): Promise<void> {
  await db('events').where({ id: eventId }).update({ has_calendar_invites: value, updated_at: db.fn.now() });
}

/**
 * Delivery rows for one message each, in invitee order: the given invitees, or all of the
 * event's; with `withRsvps`, also everyone whose RSVP is yes or maybe (their confirmation
 * put the event in their calendar, so its updates and cancellation must reach them too).
 * One message per address: an invitee who also answered is written to once, as an
 * invitee. Each recipient comes with their answer, if any, for the calendar part's PARTSTAT.
 */
export async function insertDeliveriesFor(
  db: Knex,
  p: { teamId: number; eventId: number; kind: MailKind; sequence: number; inviteeIds?: number[]; withRsvps?: boolean },
): Promise<NewDelivery[]> {
  const only = p.inviteeIds ? 'AND i.id = ANY(?::bigint[])' : '';
  const { rows } = await db.raw(
    `WITH recipients AS (
       SELECT i.id AS invitee_id, i.uid AS invitee_uid, NULL::bigint AS rsvp_id, r.uid AS rsvp_uid, i.email, i.name, r.answer, 0 AS rank, i.id AS ord
         FROM invitees i
         LEFT JOIN rsvps r ON r.event_id = i.event_id AND lower(r.email) = lower(i.email) AND r.answer IN ('yes', 'maybe')
        WHERE i.event_id = ? ${only}
       UNION ALL
       SELECT NULL, NULL, r.id, r.uid, r.email, r.name, r.answer, 1, r.id
         FROM rsvps r
        WHERE ?::boolean AND r.event_id = ? AND r.answer IN ('yes', 'maybe')
          AND NOT EXISTS (SELECT 1 FROM invitees i WHERE i.event_id = r.event_id AND lower(i.email) = lower(r.email))
     ), ins AS (
       INSERT INTO deliveries (team_id, event_id, invitee_id, rsvp_id, email, kind, sequence)
       SELECT ?, ?, invitee_id, rsvp_id, email, ?, ? FROM recipients
        ORDER BY rank, ord
       ON CONFLICT DO NOTHING
       RETURNING id, key, email
     )
     SELECT ins.id, ins.key, ins.email, rc.name, rc.answer, rc.invitee_id, rc.invitee_uid, rc.rsvp_uid FROM ins JOIN recipients rc ON lower(rc.email) = lower(ins.email) ORDER BY ins.id`,
    [p.eventId, ...(p.inviteeIds ? [p.inviteeIds] : []), p.withRsvps === true, p.eventId, p.teamId, p.eventId, p.kind, p.sequence],
  );
  return rows as NewDelivery[];
}

/**
 * A page of the event's invitees in the order they were added, each with its last
 * delivery (the newest message made for it).
 */
export async function listInvitees(db: Knex, eventId: number, opts: { afterId?: number; limit: number }): Promise<InviteeWithDelivery[]> {
  const { rows } = await db.raw(
    `${INVITEES_WITH_LAST_DELIVERY}
      WHERE i.event_id = ? AND i.id > ?
      ORDER BY i.id
      LIMIT ?`,
    [eventId, opts.afterId ?? 0, opts.limit],
  );
  return rows as InviteeWithDelivery[];
}
