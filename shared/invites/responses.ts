import type { Knex } from '../db/knex';
import { recordWebhookEvent } from '../webhooks/outbox';
import { INVITEES_WITH_LAST_DELIVERY, type InviteeResponse, type InviteeWithDelivery, toInviteeJson } from './invitee-json';

/** An RSVP answer as the invitee's response (the PARTSTAT a calendar app would send). */
export const RESPONSE_OF_ANSWER = { yes: 'accepted', maybe: 'tentative', no: 'declined' } as const satisfies Record<string, InviteeResponse>;

/**
 * Records an invitee's answer, from their calendar app (an iTIP REPLY) or from their
 * email's buttons, unless a newer one is already there (one to a higher SEQUENCE); the
 * team's webhooks hear of it (`invitee.replied`) in the same transaction. `sequence` is
 * the SEQUENCE answered; below the event's, the answer is `response_stale`. Answers
 * whether it was recorded.
 */
export async function recordInviteeResponse(
  trx: Knex,
  p: { inviteeId: number; teamId: number; eventUid: string; eventSequence: number; response: InviteeResponse; sequence: number; at: Date },
): Promise<boolean> {
  const updated = await trx('invitees')
    .where({ id: p.inviteeId })
    .where((q) => q.whereNull('response_sequence').orWhere('response_sequence', '<=', p.sequence))
    .update({ response: p.response, responded_at: p.at, response_sequence: p.sequence, response_stale: p.sequence < p.eventSequence, updated_at: trx.fn.now() });
  if (!updated) return false;
  const { rows } = await trx.raw(`${INVITEES_WITH_LAST_DELIVERY} WHERE i.id = ?`, [p.inviteeId]);
  const invitee = rows[0] as InviteeWithDelivery;
  await recordWebhookEvent(trx, {
    teamId: p.teamId,
    type: 'invitee.replied',
    resource: `invitee:${invitee.uid}`,
    data: { ...toInviteeJson(invitee), event_id: `evt_${p.eventUid}` },
    at: p.at,
  });
  return true;
}
