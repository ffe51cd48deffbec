import Joi from 'joi';
import { defineJob, jobMetaSchema, QUEUES, RETRY_THROUGH_OUTAGES } from './queues';

/** The largest calendar part an inbound reply may carry into its job. */
export const MAX_REPLY_CALENDAR_CHARS = 256 * 1024;

/**
 * One message received at one reply address, as the inbound-mail service's SMTP server
 * read it: the invitee the address names (its token, checked at RCPT and again by the
 * worker) and what the message says. `reply`: an iTIP object (`calendar`, the text of its
 * text/calendar or application/ics part; `contentMethod`, the METHOD of its Content-Type,
 * which some clients give only there). `bounce`: a delivery status notification (RFC 3464)
 * about a message we sent to that invitee.
 */
export interface InboundReplyJob {
  inviteeId: number;
  mac: string;
  kind: 'reply' | 'bounce';
  calendar?: string;
  contentMethod?: string;
  bounce?: { action: string; status: string; diagnostic: string | null; recipient: string | null };
  /** The message's Message-ID and From, for the logs. */
  messageId?: string;
  from?: string;
  receivedAtMs: number;
}

const line = (max: number) => Joi.string().max(max);

export const inboundReplyJob = defineJob<InboundReplyJob>({
  queue: QUEUES.inboundReplies,
  schema: Joi.object({
    inviteeId: Joi.number().integer().min(1).required(),
    mac: Joi.string().hex().length(32).required(),
    kind: Joi.string().valid('reply', 'bounce').required(),
    calendar: Joi.string().max(MAX_REPLY_CALENDAR_CHARS).when('kind', { is: 'reply', then: Joi.required() }),
    contentMethod: line(40),
    bounce: Joi.object({
      action: line(40).required(),
      status: line(40).required(),
      diagnostic: line(1000).allow(null).required(),
      recipient: line(500).allow(null).required(),
    }).when('kind', { is: 'bounce', then: Joi.required() }),
    messageId: line(1000),
    from: line(1000),
    receivedAtMs: Joi.number().integer().required(),
    meta: jobMetaSchema,
  }),
  // Its only failures are outages: retried for hours, never dropped.
  defaults: RETRY_THROUGH_OUTAGES,
});
