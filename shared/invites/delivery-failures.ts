import type { Knex } from '../db/knex';
import { recordWebhookEvent } from '../webhooks/outbox';
import { inviteesWithLastDelivery, toInviteeJson } from './invitee-json';

/**
 * What follows a message that failed for good, whoever learnt it (the mail worker from
 * the SMTP reply, the inbound-mail service from a bounce), in the transaction that
 * recorded the failure: an address that refused for good (`permanent`) is not sent the
 * team's email again (mail_suppressions), and the team's webhooks hear of an invitee's
 * failed message (`invitee.delivery_failed`).
 */
export async function afterDeliveryFailed(
  trx: Knex,
  row: { invitee_id: number | null; team_id: number; email: string },
  reason: string,
  permanent: boolean,
  at: Date,
): Promise<void> {
  if (permanent) {
    await trx.raw('INSERT INTO mail_suppressions (team_id, email, reason) VALUES (?, lower(?), ?) ON CONFLICT DO NOTHING', [row.team_id, row.email, reason.slice(0, 500)]);
  }
  if (!row.invitee_id) return;
  const [invitee] = await inviteesWithLastDelivery(trx, [row.invitee_id]);
  if (!invitee) return;
  const event = await trx('events').first('uid').where({ id: invitee.event_id });
  await recordWebhookEvent(trx, {
    teamId: row.team_id,
    type: 'invitee.delivery_failed',
    resource: `invitee:${invitee.uid}`,
    data: { ...toInviteeJson(invitee), event_id: event ? `evt_${event.uid}` : null },
    at,
  });
}
