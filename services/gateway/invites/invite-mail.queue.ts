import { pgTimestampToMillis } from '../../../shared/calendar/dates';
import { eventPublicUrl } from '../../../shared/calendar/platforms';
import type { Knex } from '../../../shared/db/knex';
import { type EventSnapshot, fanOutPriority, type MailKind, mailJob, mailJobId } from '../../../shared/queues/mail-jobs';
import type { AppContext } from '../context';
import type { EventWithCalendar } from '../events/events.repository';
import { insertDeliveriesFor } from './invites.repository';

export type MailDeps = Pick<AppContext, 'config' | 'queues'>;

/** The event as the message will show it, captured now (see EventSnapshot). */
export function eventSnapshot({ event: e }: EventWithCalendar, baseUrl: string, sequence: number): EventSnapshot {
  return {
    uid: e.uid,
    uidHost: new URL(baseUrl).host,
    sequence,
    title: e.title,
    descriptionHtml: e.description,
    location: e.location,
    url: eventPublicUrl(baseUrl, e.uid),
    startMs: pgTimestampToMillis(e.date_start),
    endMs: pgTimestampToMillis(e.date_end),
    isAllDay: e.is_all_day,
    timezone: e.timezone,
    recurrenceRule: e.recurrence_rule,
    reminderBefore: e.reminder_before,
    busyType: e.busy_type,
    updatedMs: pgTimestampToMillis(e.updated_at),
    createdMs: pgTimestampToMillis(e.created_at),
  };
}

/**
 * Makes one delivery row per invitee (all of the event's, or those given) and queues one
 * job per message. Call inside the transaction that holds the event row lock: the jobs are
 * stored in Redis before the rows commit, so a Redis outage rolls the whole change back
 * (a 503, nothing stored), and the worker, finding a row not yet visible, waits on that
 * same lock instead of guessing (see services/mail-worker). Answers how many were queued.
 */
export async function queueInviteMail(
  trx: Knex,
  deps: MailDeps,
  p: { found: EventWithCalendar; kind: MailKind; sequence: number; inviteeIds?: number[]; requestId?: string },
): Promise<number> {
  const { event } = p.found;
  const deliveries = await insertDeliveriesFor(trx, {
    teamId: event.team_id,
    eventId: event.id,
    kind: p.kind,
    sequence: p.sequence,
    inviteeIds: p.inviteeIds,
  });
  if (!deliveries.length) return 0;
  const snapshot = eventSnapshot(p.found, deps.config.publicBaseUrl, p.sequence);
  const { maxAttempts, backoffMs } = deps.config.mail;
  await deps.queues.producer(mailJob).addBulk(
    deliveries.map((d, i) => ({
      name: p.kind,
      data: {
        deliveryId: d.id,
        eventId: event.id,
        kind: p.kind,
        to: { email: d.email, name: d.name },
        event: snapshot,
        meta: p.requestId ? { requestId: p.requestId } : undefined,
      },
      opts: {
        jobId: mailJobId(d.id),
        priority: fanOutPriority(i + 1),
        attempts: maxAttempts,
        backoff: { type: 'exponential', delay: backoffMs },
      },
    })),
  );
  return deliveries.length;
}
