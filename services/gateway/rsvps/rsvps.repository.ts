import type { Knex } from '../../../shared/db/knex';
import type { MailKind } from '../../../shared/queues/mail.job';
import type { NewDelivery } from '../../../shared/mail/queue-mail';
import type { RsvpAnswer } from './rsvps.schemas';

export interface RsvpRow {
  id: number;
  uid: string;
  event_id: number;
  team_id: number;
  name: string;
  email: string;
  answer: RsvpAnswer;
  created_at: string;
  updated_at: string;
}

const COLUMNS = ['id', 'uid', 'event_id', 'team_id', 'name', 'email', 'answer', 'created_at', 'updated_at'] as const;
const COUNT_COLUMN = { yes: 'rsvp_yes', maybe: 'rsvp_maybe', no: 'rsvp_no' } as const;

/** The event's RSVP state, row-locked: RSVPs of one event are taken one at a time. */
export function lockEventForRsvp(trx: Knex, eventId: number) {
  return trx('events')
    .where({ id: eventId })
    .whereNull('deleted_at')
    .forUpdate()
    .first('id', 'has_rsvp', 'rsvp_limit', 'rsvp_yes', 'sequence');
}

export const findByEmail = (trx: Knex, eventId: number, email: string): Promise<RsvpRow | undefined> =>
  trx('rsvps').first(COLUMNS).where({ event_id: eventId }).whereRaw('lower(email) = lower(?)', [email]);

export async function insertRsvp(trx: Knex, values: Omit<RsvpRow, 'id' | 'created_at' | 'updated_at'>): Promise<RsvpRow> {
  const [row] = await trx('rsvps').insert(values).returning(COLUMNS);
  return row;
}

export async function updateRsvp(trx: Knex, id: number, values: { name: string; answer: RsvpAnswer }): Promise<RsvpRow> {
  const [row] = await trx('rsvps')
    .where({ id })
    .update({ ...values, updated_at: trx.fn.now() })
    .returning(COLUMNS);
  return row;
}

/** Moves one answer between the event's counters (either side may be absent). */
export async function adjustCounts(trx: Knex, eventId: number, from: RsvpAnswer | null, to: RsvpAnswer | null): Promise<void> {
  if (from === to) return;
  const changes: Record<string, Knex.Raw> = {};
  if (from) changes[COUNT_COLUMN[from]] = trx.raw('?? - 1', [COUNT_COLUMN[from]]);
  if (to) changes[COUNT_COLUMN[to]] = trx.raw('?? + 1', [COUNT_COLUMN[to]]);
  await trx('events').where({ id: eventId }).update(changes);
}

export function listRsvps(db: Knex, eventId: number, f: { answer?: string; afterId?: number; limit: number }): Promise<RsvpRow[]> {
  const q = db('rsvps').select(COLUMNS).where({ event_id: eventId }).orderBy('id').limit(f.limit);
  if (f.answer) q.where({ answer: f.answer });
  if (f.afterId) q.where('id', '>', f.afterId);
  return q;
}

export const findRsvp = (trx: Knex, eventId: number, uid: string): Promise<RsvpRow | undefined> =>
  trx('rsvps').first(COLUMNS).where({ event_id: eventId, uid }).forUpdate();

/** An answer of the event by its uid, unlocked (for reading). */
export const findRsvpByUid = (db: Knex, eventId: number, uid: string): Promise<RsvpRow | undefined> => db('rsvps').first(COLUMNS).where({ event_id: eventId, uid });

export async function deleteRsvp(trx: Knex, id: number): Promise<void> {
  await trx('rsvps').where({ id }).delete();
}

/**
 * The newest message with a calendar part made for this address about the event, if there
 * is one (an answer link changes nothing in a calendar, so it does not count).
 */
export const lastMessageTo = (trx: Knex, eventId: number, email: string): Promise<{ kind: MailKind; sequence: number } | undefined> =>
  trx('deliveries')
    .first('kind', 'sequence')
    .where({ event_id: eventId })
    .whereNot({ kind: 'rsvp_link' })
    .whereNot({ status: 'skipped' })
    .whereRaw('lower(email) = lower(?)', [email])
    .orderBy('id', 'desc');

/** How many answer links this address was sent about the event, and whether one went in the last hour. */
export async function answerLinksSent(trx: Knex, eventId: number, email: string): Promise<{ sent: number; recent: boolean }> {
  const row = await trx('deliveries')
    .where({ event_id: eventId, kind: 'rsvp_link' })
    .whereRaw('lower(email) = lower(?)', [email])
    .first(trx.raw('count(*)::int AS sent'), trx.raw("coalesce(bool_or(created_at > now() - interval '1 hour'), false) AS recent"));
  return { sent: row?.sent ?? 0, recent: row?.recent ?? false };
}

/**
 * The delivery row of one message to the person who gave this answer (its confirmation,
 * or a cancellation), or none when that message was already made at this SEQUENCE
 * (answering yes twice sends one confirmation).
 */
export async function insertRsvpDelivery(
  trx: Knex,
  p: { rsvp: RsvpRow; kind: MailKind; sequence: number },
): Promise<NewDelivery[]> {
  const rows: Array<{ id: number; key: string; email: string }> = await trx('deliveries')
    .insert({ team_id: p.rsvp.team_id, event_id: p.rsvp.event_id, rsvp_id: p.rsvp.id, email: p.rsvp.email, kind: p.kind, sequence: p.sequence })
    .onConflict()
    .ignore()
    .returning(['id', 'key', 'email']);
  return rows.map((r) => ({ id: r.id, key: r.key, email: r.email, name: p.rsvp.name, rsvp_uid: p.rsvp.uid }));
}
