import type { Knex } from '../db/knex';
import { recordWebhookEvent } from '../webhooks/outbox';
import { type InviteeResponse, inviteesWithLastDelivery, LATEST_SENT_SEQUENCE, toInviteeJson } from './invitee-json';

/** An RSVP answer as the invitee's response (the PARTSTAT a calendar app would send). */
export const RESPONSE_OF_ANSWER = { yes: 'accepted', maybe: 'tentative', no: 'declined' } as const satisfies Record<string, InviteeResponse>;

/** What became of an answer: recorded, or left out as older than the one recorded or the same as it. */
type ResponseOutcome = 'recorded' | 'older_than_recorded' | 'same_as_recorded';

/**
 * Records an invitee's answer, from their calendar app (an iTIP REPLY) or from their
 * email's buttons, and tells the team's webhooks (`invitee.replied`) in the same
 * transaction. `sequence` is the SEQUENCE answered (a REPLY's own); left out, the answer is
 * to the newest invitation or update the invitee was sent. An answer to a lower SEQUENCE than
 * the one recorded changes nothing, and so does the same answer again (a client sending its
 * reply twice, a job run again): one webhook per change.
 */
export async function recordInviteeResponse(
  trx: Knex,
  p: { inviteeId: number; teamId: number; eventUid: string; response: InviteeResponse; sequence?: number; at: Date },
): Promise<ResponseOutcome> {
  const current = await trx('invitees').forUpdate().first('response', 'response_sequence').where({ id: p.inviteeId });
  if (!current) return 'same_as_recorded';
  const answered = p.sequence ?? (await trx.raw(`SELECT ${LATEST_SENT_SEQUENCE} AS s FROM invitees i WHERE i.id = ?`, [p.inviteeId])).rows[0].s;
  if (current.response_sequence !== null && current.response_sequence > answered) return 'older_than_recorded';
  if (current.response === p.response && current.response_sequence === answered) return 'same_as_recorded';
  await trx('invitees')
    .where({ id: p.inviteeId })
    .update({ response: p.response, responded_at: p.at, response_sequence: answered, updated_at: trx.fn.now() });
  const [invitee] = await inviteesWithLastDelivery(trx, [p.inviteeId]);
  await recordWebhookEvent(trx, {
    teamId: p.teamId,
    type: 'invitee.replied',
    resource: `invitee:${invitee.uid}`,
    data: { ...toInviteeJson(invitee), event_id: `evt_${p.eventUid}` },
    at: p.at,
  });
  return 'recorded';
}
