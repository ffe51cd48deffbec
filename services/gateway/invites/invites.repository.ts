import type { Knex } from '../../../shared/db/knex';
import type { MailKind } from '../../../shared/queues/mail-jobs';

export interface InviteeRow {
  id: number;
  uid: string;
  team_id: number;
  event_id: number;
  email: string;
  name: string | null;
  created_at: string;
  updated_at: string;
}

export interface LastDelivery {
  kind: MailKind;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  error: string | null;
  sent_at: string | null;
}

export interface InviteeWithDelivery extends InviteeRow {
  last_delivery: LastDelivery | null;
}

/** A delivery row just made, with whom it goes to. */
export interface NewDelivery {
  id: number;
  email: string;
  name: string | null;
}

const INVITEE_COLUMNS = ['id', 'uid', 'team_id', 'event_id', 'email', 'name', 'created_at', 'updated_at'] as const;

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

/** Delivery rows for the given invitees (one message each), in invitee order. */
export async function insertDeliveriesFor(
  db: Knex,
  p: { teamId: number; eventId: number; kind: MailKind; sequence: number; inviteeIds?: number[] },
): Promise<NewDelivery[]> {
  const only = p.inviteeIds ? 'AND i.id = ANY(?::bigint[])' : '';
  const { rows } = await db.raw(
    `WITH ins AS (
       INSERT INTO deliveries (team_id, event_id, invitee_id, email, kind, sequence)
       SELECT ?, i.event_id, i.id, i.email, ?, ? FROM invitees i
        WHERE i.event_id = ? ${only}
        ORDER BY i.id
       ON CONFLICT DO NOTHING
       RETURNING id, invitee_id, email
     )
     SELECT ins.id, ins.email, i.name FROM ins JOIN invitees i ON i.id = ins.invitee_id ORDER BY ins.id`,
    [p.teamId, p.kind, p.sequence, p.eventId, ...(p.inviteeIds ? [p.inviteeIds] : [])],
  );
  return rows as NewDelivery[];
}

/**
 * A page of the event's invitees in the order they were added, each with its last
 * delivery (the newest message made for it).
 */
export async function listInvitees(db: Knex, eventId: number, opts: { afterId?: number; limit: number }): Promise<InviteeWithDelivery[]> {
  const { rows } = await db.raw(
    `SELECT ${INVITEE_COLUMNS.map((c) => `i.${c}`).join(', ')},
            CASE WHEN d.id IS NULL THEN NULL ELSE json_build_object(
              'kind', d.kind, 'status', d.status, 'attempts', d.attempts, 'error', d.error, 'sent_at', d.sent_at::text
            ) END AS last_delivery
       FROM invitees i
       LEFT JOIN LATERAL (
         SELECT id, kind, status, attempts, error, sent_at FROM deliveries
          WHERE invitee_id = i.id ORDER BY id DESC LIMIT 1
       ) d ON true
      WHERE i.event_id = ? AND i.id > ?
      ORDER BY i.id
      LIMIT ?`,
    [eventId, opts.afterId ?? 0, opts.limit],
  );
  return rows as InviteeWithDelivery[];
}

/** The last delivery of each of these invitees (for answers about just-named invitees). */
export async function lastDeliveries(db: Knex, inviteeIds: number[]): Promise<Map<number, LastDelivery>> {
  if (!inviteeIds.length) return new Map();
  const { rows } = await db.raw(
    `SELECT DISTINCT ON (invitee_id) invitee_id, kind, status, attempts, error, sent_at::text AS sent_at
       FROM deliveries WHERE invitee_id = ANY(?::bigint[])
      ORDER BY invitee_id, id DESC`,
    [inviteeIds],
  );
  return new Map((rows as Array<LastDelivery & { invitee_id: number }>).map(({ invitee_id, ...d }) => [invitee_id, d]));
}
