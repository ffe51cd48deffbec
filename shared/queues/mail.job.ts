import Joi from 'joi';
import type { IcsAttendee, IcsEvent } from '../calendar/ics';
import { type Locale, LOCALES } from '../i18n/translations';
import { newUid } from '../ids/ids';
import { defineJob, jobMetaSchema, QUEUES } from './queues';

/**
 * `cancellation`: the event is cancelled (deleted with `notify_invitees`). `removal`: the
 * event goes on without this person (an invitee removed, an RSVP deleted by the organizer).
 * `rsvp_*`: answers given on the event page, confirmed (`rsvp_no` takes back a yes or maybe).
 * `rsvp_link`: the link that changes an address's answer (its key), sent to that address when
 * an answer without the key was given with it and no confirmation carries the link: a first
 * answer of no, or an answer that would have changed the address's earlier one (no calendar
 * part: nothing about the event changed in the person's calendar).
 * `reminder`: the event is about to start (an `email_reminders` offset before an occurrence);
 * no calendar part either, so it never changes the person's calendar entry.
 */
export const MAIL_KINDS = ['invitation', 'update', 'cancellation', 'removal', 'rsvp_yes', 'rsvp_maybe', 'rsvp_no', 'rsvp_link', 'reminder'] as const;
export type MailKind = (typeof MAIL_KINDS)[number];

/** Kinds whose message carries the event as an iTIP calendar part. */
export const hasCalendarPart = (kind: MailKind) => kind !== 'rsvp_link' && kind !== 'reminder';

/** Kinds sent to one person about their own RSVP, whose job carries that person's change link. */
export const isRsvpKind = (kind: MailKind) => kind.startsWith('rsvp_');

/**
 * What the recipient has said about the event, for the calendar part's ATTENDEE PARTSTAT:
 * an RSVP confirmation carries the answer given on the event page (and asks for no reply);
 * invitations and updates ask for one.
 */
type AttendeeAnswer = NonNullable<IcsAttendee['answer']>;

/** An RSVP answer as a PARTSTAT: its confirmation, and updates and cancellations to someone who gave it, carry it. */
export const RSVP_PARTSTAT = { yes: 'ACCEPTED', maybe: 'TENTATIVE', no: 'DECLINED' } as const satisfies Record<string, AttendeeAnswer>;
export const ATTENDEE_ANSWER: Partial<Record<MailKind, AttendeeAnswer>> = { rsvp_yes: RSVP_PARTSTAT.yes, rsvp_maybe: RSVP_PARTSTAT.maybe, rsvp_no: RSVP_PARTSTAT.no };

/** Kinds whose calendar part is a METHOD:CANCEL: it takes the event out of the recipient's calendar. */
export const isCancelKind = (kind: MailKind) => kind === 'cancellation' || kind === 'removal' || kind === 'rsvp_no';

/**
 * Whether the CANCEL cancels the event itself (STATUS:CANCELLED) rather than taking one
 * attendee off it, which RFC 5546 §3.2.5 sends without STATUS.
 */
export const cancelsEvent = (kind: MailKind) => kind === 'cancellation';

/**
 * The event as it was when the message was queued: a cancellation for an event deleted a
 * second later still has everything it needs, and an update shows what was true when it
 * was sent. Its fields are IcsEvent's, with the page address and the stamp fixed.
 */
export interface EventSnapshot extends Omit<IcsEvent, 'url' | 'createdMs' | 'cancelled'> {
  /** Host part of the ICS UID (the public host), so the UID matches the event's .ics. */
  uidHost: string;
  /**
   * The event page as the recipient can open it: with a signed pair for a protected event;
   * null when the event has no public page (a draft, pending or rejected event).
   */
  url: string | null;
  createdMs: number;
  /** When the change was made and the message decided: its DTSTAMP (RFC 5546). */
  stampMs: number;
  /**
   * The calendar's organizer: the ORGANIZER calendar apps send an invitee's answer to, and
   * the Reply-To. Absent in jobs queued before it was known: the sender is named then.
   */
  organizer?: { name: string; email: string };
}

/** One message of a job: to whom, and the delivery row that records its fate. */
export interface MailMessage {
  deliveryId: number;
  /**
   * The row's random key: the worker claims the row only with both, so a job of another
   * database (restored, recreated, or another deployment's) can never touch this row.
   * Absent only for rows made before keys were (their jobs name none).
   */
  key?: string;
  to: { email: string; name: string | null };
  /** The recipient's own answer (from their RSVP), which wins over the kind's (ATTENDEE_ANSWER). */
  answer?: AttendeeAnswer;
  /** The recipient's own links, signed for them alone: see RecipientLinks. */
  links?: RecipientLinks;
  /**
   * The invitee's own reply address (`reply+<token>@REPLY_DOMAIN`): the ORGANIZER their
   * calendar app answers to and the envelope sender bounces return to. Absent: the
   * event's organizer is the ORGANIZER, MAIL_FROM the envelope sender.
   */
  replyAddress?: string;
}

/**
 * Links only one recipient may use, made by the gateway when it queues the message:
 * `answer`, the Yes / Maybe / No buttons of an event that takes RSVPs (each opens a page
 * that answers with one click); `unsubscribe`, the one-click opt-out of the event's
 * reminders (List-Unsubscribe, RFC 8058).
 */
export interface RecipientLinks {
  answer?: { yes: string; maybe: string; no: string };
  unsubscribe?: string;
}

/**
 * A small batch of one fan-out's messages (MAIL_BATCH_SIZE at most): same event, same
 * kind, one recipient each. Batches keep the per-message cost of the queue and of the
 * delivery records low; each message still has its own delivery row, so a re-run job
 * sends only what is not yet recorded.
 */
export interface MailJob {
  /** The event row, whose lock orders the worker after the transaction that queued the job. */
  eventId: number;
  kind: MailKind;
  event: EventSnapshot;
  messages: MailMessage[];
  /**
   * The recipient's link for changing their RSVP (it is their key to the answer). Only on
   * jobs of one person's RSVP message (isRsvpKind), which hold that one message.
   */
  answerUrl?: string;
  /**
   * The language the messages are written in (see queueDeliveries). Absent in jobs queued
   * before messages had one: English.
   */
  locale?: Locale;
}

const snapshotSchema = Joi.object({
  uid: Joi.string().required(),
  uidHost: Joi.string().required(),
  sequence: Joi.number().integer().min(0).required(),
  title: Joi.string().required(),
  descriptionHtml: Joi.string().allow(null).required(),
  location: Joi.string().allow(null).required(),
  url: Joi.string().allow(null).required(),
  startMs: Joi.number().integer().required(),
  endMs: Joi.number().integer().required(),
  isAllDay: Joi.boolean().required(),
  timezone: Joi.string().required(),
  recurrenceRule: Joi.string().allow(null).required(),
  reminderBefore: Joi.number().integer().allow(null).required(),
  busyType: Joi.string().valid('busy', 'free').allow(null).required(),
  updatedMs: Joi.number().integer().required(),
  createdMs: Joi.number().integer().required(),
  stampMs: Joi.number().integer().required(),
  organizer: Joi.object({ name: Joi.string().allow('').max(255).required(), email: Joi.string().max(254).required() }),
});

export const mailJob = defineJob<MailJob>({
  queue: QUEUES.emails,
  schema: Joi.object({
    eventId: Joi.number().integer().min(1).required(),
    kind: Joi.string()
      .valid(...MAIL_KINDS)
      .required(),
    event: snapshotSchema.required(),
    messages: Joi.array()
      .items(
        Joi.object({
          deliveryId: Joi.number().integer().min(1).required(),
          key: Joi.string().guid(),
          to: Joi.object({ email: Joi.string().required(), name: Joi.string().allow(null).required() }).required(),
          answer: Joi.string().valid(...Object.values(RSVP_PARTSTAT)),
          links: Joi.object({
            answer: Joi.object({ yes: Joi.string().uri().required(), maybe: Joi.string().uri().required(), no: Joi.string().uri().required() }),
            unsubscribe: Joi.string().uri(),
          }),
          replyAddress: Joi.string().email({ tlds: false }),
        }),
      )
      .min(1)
      .required(),
    answerUrl: Joi.string(),
    locale: Joi.string().valid(...LOCALES),
    meta: jobMetaSchema,
  }),
  // attempts and backoff come from the MAIL_* settings, stamped on each job when queued.
  defaults: {},
});

/**
 * A job's id: random. Never a row id: BullMQ silently ignores an add whose id it still
 * holds (finished jobs are kept a day), so ids that a restored or recreated database, or a
 * second deployment on the same Redis, hands out again would drop those messages unsent.
 * Each delivery row is put in one job only by the transaction that makes it.
 */
export const newMailJobId = () => `mail-${newUid()}`;

