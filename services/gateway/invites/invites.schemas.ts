import Joi from 'joi';
import { MAIL_KINDS } from '../../../shared/queues/mail.job';
import { cursorParam, emailAddress, idParam, personName } from '../http/validation';

const MAX_INVITEES_PER_CALL = 500;

const inviteeInput = Joi.object({
  // TLDs unchecked: private and reserved domains (example.test, corp.internal) are real recipients.
  email: emailAddress().required(),
  name: personName().allow(null, ''),
}).unknown(true);

export const addInviteesBody = Joi.object({
  invitees: Joi.array().items(inviteeInput).min(1).max(MAX_INVITEES_PER_CALL).required().description('Deduplicated by email (case-insensitive)'),
}).unknown(true);

export const eventInvitesParams = Joi.object({
  cal: idParam('cal_'),
  evt: idParam('evt_'),
});

export const inviteParams = eventInvitesParams.keys({ inv: idParam('inv_') });

export const listInvitesQuery = Joi.object({
  per_page: Joi.number().integer().min(1).max(500).default(100),
  cursor: cursorParam(),
}).unknown(true);

const isoMicros = () => Joi.string().pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);

const lastDeliverySchema = Joi.object({
  kind: Joi.string()
    .valid(...MAIL_KINDS)
    .required(),
  status: Joi.string().valid('queued', 'sent', 'failed', 'skipped').required().description('skipped: not sent, over the team\'s email quota or the recipient\'s daily limit (see `error`)'),
  attempts: Joi.number().integer().min(0).required().description('SMTP attempts made so far'),
  error: Joi.string().allow(null).required().description("The SMTP server's reply (or the connection error) of the last failure"),
  sent_at: isoMicros().allow(null).required(),
}).meta({ title: 'Delivery' });

const inviteeSchema = Joi.object({
  id: Joi.string().pattern(/^inv_/).required(),
  email: Joi.string().required(),
  name: Joi.string().allow(null).required(),
  created_at: isoMicros().required(),
  last_delivery: lastDeliverySchema.allow(null).required().description('The newest message made for this invitee'),
  response: Joi.string()
    .valid('accepted', 'declined', 'tentative')
    .allow(null)
    .required()
    .description("The invitee's answer: from their calendar app (an iTIP REPLY to their reply address, with REPLY_DOMAIN) or from the answer buttons of their email; null: none yet"),
  responded_at: isoMicros().allow(null).required(),
  response_stale: Joi.boolean()
    .required()
    .description('The answer was to an earlier version of the event than the newest invitation or update sent to this invitee (a lower SEQUENCE): the event has changed since the person answered'),
}).meta({ title: 'Invitee' });

export const addedInviteesSchema = Joi.object({
  data: Joi.array().items(inviteeSchema).required().description('Every invitee the request named, once'),
  meta: Joi.object({
    added: Joi.number().integer().min(0).required().description('New invitees; each was queued an invitation'),
    already_invited: Joi.number().integer().min(0).required().description('Already on the list: left as they were, nothing sent'),
  }).required(),
});

export const inviteeListSchema = Joi.object({
  data: Joi.array().items(inviteeSchema).required(),
  meta: Joi.object({
    per_page: Joi.number().integer().required(),
    next_cursor: Joi.string().allow(null).required(),
  }).required(),
});

export const removedInviteeSchema = Joi.object({
  data: Joi.object({
    id: Joi.string().pattern(/^inv_/).required(),
    deleted: Joi.boolean().valid(true).required(),
    cancellation_queued: Joi.boolean().required(),
  }).required(),
});

export interface InviteeInput {
  email: string;
  name?: string | null;
}

export interface AddInviteesInput {
  invitees: InviteeInput[];
}

export interface ListInvitesQuery {
  per_page: number;
  cursor?: string;
}
