import { organizerOf } from '../calendars/calendars.repository';
import { pgTimestampToMillis } from '../../../shared/calendar/dates';
import { applyMailQuota } from './mail-quota';
import { toIcsEvent } from '../calendar/event-view';
import type { Knex } from '../../../shared/db/knex';
import { type EventSnapshot, fanOutPriority, type MailKind, mailJob, newMailJobId, RSVP_PARTSTAT } from '../../../shared/queues/mail.job';
import type { AppContext } from '../context';
import type { EventWithCalendar } from '../events/events.repository';
import { eventView, isPublished } from '../public/public.service';
import { signedEventUrl } from '../public/signatures';
import { insertDeliveriesFor, type NewDelivery } from './invites.repository';
import { recipientParts } from './recipient-links';

export type MailDeps = Pick<AppContext, 'config' | 'queues' | 'clock'>;

/**
 * Whether a whole-event message (an update, a cancellation) has anyone to go to: invitees,
 * or people whose yes or maybe put the event in their calendar.
 */
export const hasMailAudience = (e: Pick<EventWithCalendar['event'], 'has_calendar_invites' | 'rsvp_yes' | 'rsvp_maybe'>) =>
  e.has_calendar_invites || e.rsvp_yes + e.rsvp_maybe > 0;

/** How long the signed page link in a protected event's messages works after the event ends. */
const SIGNED_LINK_GRACE_MS = 30 * 86_400_000;
/** And at most how long from the message (a repeating event has no last end to go by). */
const SIGNED_LINK_MAX_MS = 365 * 86_400_000;

/**
 * The page address a message gives: none for an event without a public page (a draft,
 * pending or rejected event would be a 404); for a protected one, the page with a signed
 * pair, since the message already tells its recipient what the page shows. The pair works
 * until 30 days after the event ends (a repeating one: a year), and like any signed URL
 * stops working when the access code changes.
 */
function recipientPageUrl(found: EventWithCalendar, pageUrl: string, deps: { appKey: string; publicBaseUrl: string }, nowMs: number): string | null {
  const { event } = found;
  if (!isPublished(event)) return null;
  if (!event.access_code_hash) return pageUrl;
  const until = event.recurrence_rule ? Infinity : Math.max(nowMs, pgTimestampToMillis(event.ends_at)) + SIGNED_LINK_GRACE_MS;
  const expires = Math.floor(Math.min(until, nowMs + SIGNED_LINK_MAX_MS) / 1000);
  return signedEventUrl(deps.appKey, deps.publicBaseUrl, { uid: event.uid, access_code_hash: event.access_code_hash }, expires);
}

/**
 * The event as the message will show it, captured now (see EventSnapshot): the same
 * fields as its public .ics (a location given only as a URL included), at the SEQUENCE
 * this message carries, with the page address its recipient can open.
 */
function eventSnapshot(
  found: EventWithCalendar,
  deps: { appKey: string; publicBaseUrl: string },
  sequence: number,
  stampMs: number,
  organizer: { name: string; email: string },
): EventSnapshot {
  const view = eventView(found, deps.publicBaseUrl);
  return {
    ...toIcsEvent(view),
    sequence,
    uidHost: new URL(deps.publicBaseUrl).host,
    url: recipientPageUrl(found, view.pageUrl, deps, stampMs),
    createdMs: pgTimestampToMillis(found.event.created_at),
    stampMs,
    organizer,
  };
}

/**
 * Makes one delivery row per invitee (all of the event's, or those given; with
 * `withRsvps`, also per yes or maybe RSVP: see insertDeliveriesFor) and queues them
 * in jobs of MAIL_BATCH_SIZE messages, the n-th batch at priority n (fair ordering, see
 * fanOutPriority). Call inside the transaction that holds the event row lock: the jobs
 * are stored in Redis before the rows commit, so a Redis outage rolls the whole change
 * back (a 503, nothing stored), and the worker, finding a row not yet visible, waits on
 * that same lock instead of guessing (see services/mail-worker). Answers how many
 * messages were queued.
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

/**
 * Queues messages for delivery rows just made (in the caller's transaction, which holds
 * the event row lock: see queueInviteMail; what it reads, it reads there), MAIL_BATCH_SIZE
 * per job, the n-th batch at priority n.
 */
export async function queueDeliveries(
  trx: Knex,
  deps: MailDeps,
  p: { found: EventWithCalendar; kind: MailKind; sequence: number; deliveries: NewDelivery[]; requestId?: string; answerUrl?: string },
): Promise<void> {
  const { event } = p.found;
  const { deliveries } = p;
  if (!deliveries.length) return;
  if (p.answerUrl && deliveries.length !== 1) throw new Error('an answer link is for one message to one person');
  const snapshot = eventSnapshot(p.found, deps.config, p.sequence, deps.clock.now().getTime(), await organizerOf(trx, p.found.calendar));
  const { maxAttempts, backoffMs, batchSize } = deps.config.mail;
  const jobs = [];
  for (let i = 0; i < deliveries.length; i += batchSize) {
    const batch = deliveries.slice(i, i + batchSize);
    jobs.push({
      name: p.kind,
      data: {
        eventId: event.id,
        kind: p.kind,
        event: snapshot,
        messages: batch.map((d) => ({
          deliveryId: d.id,
          key: d.key,
          to: { email: d.email, name: d.name },
          ...(d.answer ? { answer: RSVP_PARTSTAT[d.answer] } : {}),
          ...recipientParts(deps.config, event, p.kind, d),
        })),
        ...(p.answerUrl ? { answerUrl: p.answerUrl } : {}),
        meta: p.requestId ? { requestId: p.requestId } : undefined,
      },
      opts: {
        jobId: newMailJobId(),
        priority: fanOutPriority(jobs.length + 1),
        attempts: maxAttempts,
        backoff: { type: 'exponential', delay: backoffMs },
      },
    });
  }
  await deps.queues.producer(mailJob).addBulk(jobs);
}
