import type { Config } from '../config/config';
import { pgTimestampToMillis } from '../calendar/dates';
import { type StoredEvent, storedEventView, toIcsEvent } from '../calendar/event-view';
import type { Knex } from '../db/knex';
import { isLocale, type Locale } from '../i18n/translations';
import type { Clock } from '../lifecycle/clock';
import { signedEventUrl } from '../links/signatures';
import { type EventSnapshot, type MailJob, type MailKind, mailJob, newMailJobId, type RecipientLinks, RSVP_PARTSTAT } from '../queues/mail.job';
import type { JobContract, Producer } from '../queues/queues';
import { teamTurns } from './mail-fairness';
import { withRecipientParts } from './recipient-links';

/**
 * Queuing email: the one way the gateway (invitations, updates, cancellations, RSVP messages)
 * and the mail worker's reminder sweep put messages on the emails queue, for delivery rows
 * just made in the caller's transaction.
 */

/** A delivery row just made, with whom it goes to (and their RSVP answer, if they gave one). */
export interface NewDelivery {
  id: number;
  /** The row's random key, which its job names beside the id (see MailMessage). */
  key: string;
  email: string;
  name: string | null;
  answer?: 'yes' | 'maybe' | null;
  /** Links signed for this recipient alone (see RecipientLinks); the answer buttons are added by queueDeliveries. */
  links?: RecipientLinks;
  /** Whom the row is for: an invitee (id and uid), or a person known by their RSVP (its uid). */
  invitee_id?: number | null;
  invitee_uid?: string | null;
  rsvp_uid?: string | null;
}

/** The event columns a message is made from. */
export interface MailEventRow extends StoredEvent {
  id: number;
  team_id: number;
  status: 'approved' | 'pending' | 'rejected';
  is_draft: boolean;
  access_code_hash: string | null;
  has_rsvp: boolean;
  ends_at: string;
  created_at: string;
}

/** The calendar columns that name the organizer, and its language. */
export interface MailCalendarRow {
  team_id: number;
  name: string;
  organizer_name: string | null;
  organizer_email: string | null;
  /** Its pages' language, and its messages' (null: English). */
  locale: string | null;
}

/** Where producers come from: the gateway's queues, or a worker's own (see producersOn). */
export interface Producers {
  producer<T extends object>(contract: JobContract<T>): Producer<T>;
}

export interface MailDeps {
  config: Pick<Config, 'appKey' | 'publicBaseUrl' | 'mail' | 'replyDomain'>;
  queues: Producers;
  clock: Clock;
}

/** Drafts, pending and rejected events are not public; deleted ones are never found. */
export const isPublished = (e: Pick<MailEventRow, 'status' | 'is_draft'>) => e.status === 'approved' && !e.is_draft;

/** Whom a calendar's invitations name as organizer: its own organizer, else the team's owner (its first user). */
async function organizerOf(db: Knex, calendar: MailCalendarRow): Promise<{ name: string; email: string }> {
  if (calendar.organizer_email) return { name: calendar.organizer_name || calendar.name, email: calendar.organizer_email };
  const owner = await db('users').first('name', 'email').where({ team_id: calendar.team_id }).orderBy('id');
  return { name: calendar.organizer_name || owner.name, email: owner.email };
}

/**
 * The language a message is written in: the one its reader chose, when the message
 * answers something they did on a page shown in it (an RSVP on the event page), else the
 * calendar's `locale`, else English.
 */
const messageLocale = (calendar: Pick<MailCalendarRow, 'locale'>, chosen?: Locale): Locale => chosen ?? (isLocale(calendar.locale) ? calendar.locale : 'en');

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
function recipientPageUrl(event: MailEventRow, pageUrl: string, deps: { appKey: string; publicBaseUrl: string }, nowMs: number): string | null {
  if (!isPublished(event)) return null;
  if (!event.access_code_hash) return pageUrl;
  const until = event.recurrence_rule ? Infinity : Math.max(nowMs, pgTimestampToMillis(event.ends_at)) + SIGNED_LINK_GRACE_MS;
  const expires = Math.floor(Math.min(until, nowMs + SIGNED_LINK_MAX_MS) / 1000);
  return signedEventUrl(deps.appKey, deps.publicBaseUrl, { uid: event.uid, access_code_hash: event.access_code_hash }, expires);
}

/**
 * The event as the message will show it, captured now (see EventSnapshot): the same
 * fields as its public .ics (a location given only as a URL included), at the SEQUENCE
 * this message carries, with the page address its recipient can open. `occurrence` puts
 * one date of a repeating event in place of its first (a reminder is about that date).
 */
function eventSnapshot(
  event: MailEventRow,
  deps: { appKey: string; publicBaseUrl: string },
  p: { sequence: number; stampMs: number; organizer: { name: string; email: string }; occurrence?: { startMs: number; endMs: number } },
): EventSnapshot {
  const view = storedEventView(event, deps.publicBaseUrl);
  return {
    ...toIcsEvent(view),
    ...(p.occurrence ?? {}),
    sequence: p.sequence,
    uidHost: new URL(deps.publicBaseUrl).host,
    url: recipientPageUrl(event, view.pageUrl, deps, p.stampMs),
    createdMs: pgTimestampToMillis(event.created_at),
    stampMs: p.stampMs,
    organizer: p.organizer,
  };
}

/**
 * Queues messages for delivery rows just made, MAIL_BATCH_SIZE per job, each batch at the
 * team's next turn (fair between teams, see teamTurns). Call inside the transaction that made the
 * rows and holds the event row lock (what it reads, it reads there): the jobs are stored in
 * Redis before the rows commit, so a Redis outage rolls the whole change back, and the mail
 * worker, finding a row not yet visible, waits on that same lock instead of guessing (see
 * services/mail-worker).
 */
export async function queueDeliveries(
  trx: Knex,
  deps: MailDeps,
  p: {
    found: { event: MailEventRow; calendar: MailCalendarRow };
    kind: MailKind;
    sequence: number;
    deliveries: NewDelivery[];
    requestId?: string;
    answerUrl?: string;
    occurrence?: { startMs: number; endMs: number };
    /** The language the reader chose (see messageLocale); otherwise the calendar's. */
    locale?: Locale;
  },
): Promise<void> {
  const { event } = p.found;
  const { deliveries } = p;
  if (!deliveries.length) return;
  if (p.answerUrl && deliveries.length !== 1) throw new Error('an answer link is for one message to one person');
  const snapshot = eventSnapshot(event, deps.config, {
    sequence: p.sequence,
    stampMs: deps.clock.now().getTime(),
    organizer: await organizerOf(trx, p.found.calendar),
    occurrence: p.occurrence,
  });
  const locale = messageLocale(p.found.calendar, p.locale);
  const { maxAttempts, backoffMs, batchSize } = deps.config.mail;
  const producer = deps.queues.producer(mailJob);
  const turns = await teamTurns(producer, event.team_id, Math.ceil(deliveries.length / batchSize));
  const jobs: Parameters<Producer<MailJob>['addBulk']>[0] = [];
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
          ...withRecipientParts(deps.config, event, p.kind, d),
        })),
        ...(p.answerUrl ? { answerUrl: p.answerUrl } : {}),
        locale,
        meta: p.requestId ? { requestId: p.requestId } : undefined,
      },
      opts: {
        jobId: newMailJobId(),
        priority: turns[jobs.length],
        attempts: maxAttempts,
        backoff: { type: 'exponential', delay: backoffMs },
      },
    });
  }
  await producer.addBulk(jobs);
}
