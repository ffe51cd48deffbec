import type { Knex } from '../../shared/db/knex';
import { type ReplyToken, verifyReplyToken } from '../../shared/invites/reply-address';

/** The invitee a reply address names, with the event it is invited to. */
interface ReplyHolder {
  id: number;
  uid: string;
  team_id: number;
  event_id: number;
  email: string;
  event_uid: string;
}

/**
 * The invitee a token names, when the token is theirs (signed for this invitee of this
 * event, still on the guest list of an event not deleted); otherwise undefined.
 */
export async function findReplyHolder(db: Knex, appKey: string, token: ReplyToken): Promise<ReplyHolder | undefined> {
  const row: ReplyHolder | undefined = await db('invitees as i')
    .join('events as e', 'e.id', 'i.event_id')
    .first('i.id', 'i.uid', 'i.team_id', 'i.event_id', 'i.email', 'e.uid as event_uid')
    .where('i.id', token.inviteeId)
    .whereNull('e.deleted_at');
  if (!row || !verifyReplyToken(appKey, token, { inviteeUid: row.uid, eventUid: row.event_uid })) return undefined;
  return row;
}

/**
 * Marks the newest message sent to this invitee failed with the bounce's reason (a bounce
 * arrives after the sending server took the message, so it is about a sent one). Answers
 * the row, or undefined when there is no sent message to mark.
 */
export async function markBounced(trx: Knex, inviteeId: number, reason: string) {
  const { rows } = await trx.raw(
    `UPDATE deliveries SET status = 'failed', error = ?, updated_at = now()
      WHERE id = (SELECT id FROM deliveries WHERE invitee_id = ? AND status = 'sent' ORDER BY id DESC LIMIT 1)
      RETURNING invitee_id, team_id, email`,
    [reason.slice(0, 1000), inviteeId],
  );
  return rows[0] as { invitee_id: number; team_id: number; email: string } | undefined;
}
