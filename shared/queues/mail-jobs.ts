import Joi from 'joi';
import { defineJob, QUEUES } from './queues';

export const MAIL_KINDS = ['invitation', 'update', 'cancellation'] as const;
export type MailKind = (typeof MAIL_KINDS)[number];

/**
 * The event as it was when the message was queued: a cancellation for an event deleted a
 * second later still has everything it needs, and an update shows what was true when it
 * was sent. Field meanings as in shared/calendar/ics.ts IcsEvent.
 */
export interface EventSnapshot {
  uid: string;
  /** Host part of the ICS UID (the public host), so the UID matches the event's .ics. */
  uidHost: string;
  sequence: number;
  title: string;
  descriptionHtml: string | null;
  location: string | null;
  /** The public event page. */
  url: string;
  startMs: number;
  endMs: number;
  isAllDay: boolean;
  timezone: string;
  recurrenceRule: string | null;
  reminderBefore: number | null;
  busyType: 'busy' | 'free' | null;
  updatedMs: number;
  createdMs: number;
}

/** One message to one invitee; the delivery row (deliveryId) records its fate. */
export interface MailJob {
  deliveryId: number;
  /** The event row, whose lock orders the worker after the transaction that queued the job. */
  eventId: number;
  kind: MailKind;
  to: { email: string; name: string | null };
  event: EventSnapshot;
}

const snapshotSchema = Joi.object({
  uid: Joi.string().required(),
  uidHost: Joi.string().required(),
  sequence: Joi.number().integer().min(0).required(),
  title: Joi.string().required(),
  descriptionHtml: Joi.string().allow(null).required(),
  location: Joi.string().allow(null).required(),
  url: Joi.string().required(),
  startMs: Joi.number().integer().required(),
  endMs: Joi.number().integer().required(),
  isAllDay: Joi.boolean().required(),
  timezone: Joi.string().required(),
  recurrenceRule: Joi.string().allow(null).required(),
  reminderBefore: Joi.number().integer().allow(null).required(),
  busyType: Joi.string().valid('busy', 'free').allow(null).required(),
  updatedMs: Joi.number().integer().required(),
  createdMs: Joi.number().integer().required(),
});

export const mailJob = defineJob<MailJob>({
  queue: QUEUES.emails,
  schema: Joi.object({
    deliveryId: Joi.number().integer().min(1).required(),
    eventId: Joi.number().integer().min(1).required(),
    kind: Joi.string()
      .valid(...MAIL_KINDS)
      .required(),
    to: Joi.object({ email: Joi.string().required(), name: Joi.string().allow(null).required() }).required(),
    event: snapshotSchema.required(),
    meta: Joi.object({ requestId: Joi.string() }),
  }),
  // attempts and backoff come from the MAIL_* settings, stamped on each job when queued.
  defaults: {},
});

/** One job per message, its id derived from the delivery row, so a job can never be queued twice. */
export const mailJobId = (deliveryId: number) => `mail-${deliveryId}`;

/**
 * BullMQ priority of the n-th message (1-based) of one fan-out. Lower runs first, equal
 * priorities run in queue order, so concurrent fan-outs interleave message by message and
 * a single invitation (priority 1) goes next instead of waiting behind a 500-invitee
 * cancellation queued before it.
 */
export const MAX_PRIORITY = 2_097_152; // BullMQ's limit (2^21)
export const fanOutPriority = (n: number) => Math.min(Math.max(1, n), MAX_PRIORITY);
