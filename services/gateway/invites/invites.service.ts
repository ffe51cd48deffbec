import { type InviteeRow, type InviteeWithDelivery, inviteesWithLastDelivery } from '../../../shared/invites/invitee-json';
import { conflict, notFound } from '../../../shared/errors/app-error';
import { idListing } from '../http/cursor';
import { newUid, uidFromPublicId } from '../../../shared/ids/ids';
import type { AppContext } from '../context';
import { requireEvent } from '../events/events.service';
import { queueInviteMail } from './invite-mail.queue';
import {
  deleteInvitee,
  findInvitee,
  findInviteesByEmail,
  hasInvitees,
  insertInvitees,
  listInvitees,
  maxSentSequence,
  raiseSequence,
  setHasCalendarInvites,
} from './invites.repository';
import type { InviteeInput, ListInvitesQuery } from './invites.schemas';

type InvitesDeps = Pick<AppContext, 'db' | 'config' | 'queues' | 'caches' | 'clock'>;

interface Target {
  teamId: number;
  calPublicId: string;
  evtPublicId: string;
}

interface AddResult {
  invitees: InviteeWithDelivery[];
  added: number;
  alreadyInvited: number;
}

/** One entry per email (case-insensitive), the first one named winning. */
function dedupe(entries: InviteeInput[]): Array<{ email: string; name: string | null }> {
  const seen = new Map<string, { email: string; name: string | null }>();
  for (const e of entries) {
    const key = e.email.toLowerCase();
    if (!seen.has(key)) seen.set(key, { email: e.email, name: e.name ? e.name : null });
  }
  return [...seen.values()];
}

/**
 * An invitation goes out at once and links to the event page, which a draft, pending or
 * rejected event does not have yet (404): such events are refused rather than inviting
 * people to a page they cannot open.
 */
function assertInvitable(event: { is_draft: boolean; status: string }): void {
  if (event.is_draft) throw conflict('Publish the event before inviting people.');
  if (event.status !== 'approved') throw conflict('Approve the event before inviting people.');
}

/**
 * Adds invitees and queues each new one an invitation, in one transaction with the event
 * locked: invitees already on the list are left alone (nothing sent twice), and a Redis
 * outage stores nothing. SEQUENCE: an invitation carries the event's current SEQUENCE,
 * raised first when one of these people already had a message at that SEQUENCE (someone
 * removed and invited again must see a newer message than their cancellation).
 */
export async function addInvitees(deps: InvitesDeps, t: Target, entries: InviteeInput[], requestId?: string): Promise<AddResult> {
  const wanted = dedupe(entries);
  const result = await deps.db.transaction(async (trx) => {
    const found = await requireEvent(trx, t.teamId, t.evtPublicId, { calPublicId: t.calPublicId, lock: true });
    const { event } = found;
    assertInvitable(event);
    const existing = await findInviteesByEmail(trx, event.id, wanted.map((w) => w.email));
    const known = new Set(existing.map((r) => r.email.toLowerCase()));
    const fresh = wanted.filter((w) => !known.has(w.email.toLowerCase()));

    let inserted: InviteeRow[] = [];
    let changed = false;
    if (fresh.length) {
      let sequence = event.sequence;
      const prior = await maxSentSequence(trx, event.id, fresh.map((f) => f.email));
      if (prior >= sequence) {
        sequence = await raiseSequence(trx, event.id, prior + 1);
        changed = true;
      }
      inserted = await insertInvitees(
        trx,
        fresh.map((f) => ({ uid: newUid(), team_id: t.teamId, event_id: event.id, email: f.email, name: f.name })),
      );
      if (!event.has_calendar_invites) {
        await setHasCalendarInvites(trx, event.id, true);
        changed = true;
      }
      await queueInviteMail(trx, deps, { found, kind: 'invitation', sequence, inviteeIds: inserted.map((r) => r.id), requestId });
    }
    const rows = await inviteesWithLastDelivery(trx, [...existing, ...inserted].map((r) => r.id));
    // Answer in the order the request named them.
    const byEmail = new Map(rows.map((r) => [r.email.toLowerCase(), r]));
    const invitees = wanted.map((w) => byEmail.get(w.email.toLowerCase())).filter((r): r is InviteeWithDelivery => r !== undefined);
    return { uid: event.uid, changed, invitees, added: inserted.length, alreadyInvited: existing.length };
  });
  if (result.changed) await deps.caches.invalidate({ kind: 'event', uid: result.uid });
  return { invitees: result.invitees, added: result.added, alreadyInvited: result.alreadyInvited };
}

interface InviteePage {
  rows: InviteeWithDelivery[];
  nextCursor: string | null;
}

const INVITEES = idListing('invitees');

export async function listEventInvitees(deps: InvitesDeps, t: Target, query: ListInvitesQuery): Promise<InviteePage> {
  const afterId = INVITEES.after(deps.config.appKey, query.cursor)?.[0];
  const { event } = await requireEvent(deps.db, t.teamId, t.evtPublicId, { calPublicId: t.calPublicId });
  const rows = await listInvitees(deps.db, event.id, { afterId, limit: INVITEES.fetchLimit(query.per_page) });
  return INVITEES.page(deps.config.appKey, rows, query.per_page, (last) => [last.id]);
}

/**
 * Removes one invitee and queues them a cancellation (kind `removal`: METHOD:CANCEL for
 * them alone, the event goes on) with a raised SEQUENCE, so their calendar drops the
 * event; a later update to the others carries a higher one still.
 */
export async function removeInvitee(deps: InvitesDeps, t: Target, invPublicId: string, requestId?: string): Promise<{ publicId: string; queued: boolean }> {
  const uid = uidFromPublicId('inv_', invPublicId);
  const result = await deps.db.transaction(async (trx) => {
    const found = await requireEvent(trx, t.teamId, t.evtPublicId, { calPublicId: t.calPublicId, lock: true });
    const invitee = uid ? await findInvitee(trx, found.event.id, uid) : undefined;
    if (!invitee) throw notFound('Invitee');
    const sequence = await raiseSequence(trx, found.event.id);
    const queued = await queueInviteMail(trx, deps, { found, kind: 'removal', sequence, inviteeIds: [invitee.id], requestId });
    await deleteInvitee(trx, invitee.id);
    if (!(await hasInvitees(trx, found.event.id))) await setHasCalendarInvites(trx, found.event.id, false);
    return { eventUid: found.event.uid, queued: queued > 0 };
  });
  await deps.caches.invalidate({ kind: 'event', uid: result.eventUid });
  return { publicId: `inv_${uid}`, queued: result.queued };
}
