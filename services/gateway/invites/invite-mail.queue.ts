import { type EventWithCalendar } from '../../../shared/events/event-rows';
import { applyMailQuota } from '../../../shared/mail/mail-quota';
import { type MailDeps, queueDeliveries } from '../../../shared/mail/queue-mail';
import type { Knex } from '../../../shared/db/knex';
import type { MailKind } from '../../../shared/queues/mail.job';
import { insertDeliveriesFor } from './invites.repository';

/**
 * Whether a whole-event message (an update, a cancellation) has anyone to go to: invitees,
 * or people whose yes or maybe put the event in their calendar.
 */
export const hasMailAudience = (e: Pick<EventWithCalendar['event'], 'has_calendar_invites' | 'rsvp_yes' | 'rsvp_maybe'>) =>
  e.has_calendar_invites || e.rsvp_yes + e.rsvp_maybe > 0;

/**
 * Makes one delivery row per invitee (all of the event's, or those given; with
 * `withRsvps`, also per yes or maybe RSVP: see insertDeliveriesFor) and queues them
 * (queueDeliveries: in jobs of MAIL_BATCH_SIZE messages, each at the team's next turn).
 * Call inside the transaction that holds the event row lock: the jobs are stored in Redis
 * before the rows commit, so a Redis outage rolls the whole change back (a 503, nothing
 * stored). Answers how many messages were queued.
 */
export async function queueInviteMail(
  trx: Knex,
  deps: MailDeps,
  p: { found: EventWithCalendar; kind: MailKind; sequence: number; inviteeIds?: number[]; withRsvps?: boolean; requestId?: string },
): Promise<number> {
  const { event } = p.found;
  const inserted = await insertDeliveriesFor(trx, {
    teamId: event.team_id,
    eventId: event.id,
    kind: p.kind,
    sequence: p.sequence,
    inviteeIds: p.inviteeIds,
    withRsvps: p.withRsvps,
  });
  // Over the team's quota the call is refused (the transaction rolls back): see mail-quota.ts.
  const deliveries = await applyMailQuota(trx, event.team_id, inserted, deps.clock.now(), 'refuse');
  await queueDeliveries(trx, deps, { ...p, deliveries });
  return deliveries.length;
}
