import Joi from 'joi';
import { EVENT_TEXT_CHARS } from '../../../shared/events/limits';
import { bool, cursorParam, dateInput, idParam, label, text, timezone } from '../http/validation';

const fields = {
  name: label(255),
  calendar: Joi.string().max(255).description('A cal_ id'),
  requires_approval: bool().description('Events start pending until approved'),
  signed: bool().description('Require a Standard Webhooks signature'),
  default_duration: Joi.number().integer().min(1).max(525600).description('Minutes, when a submission gives no end'),
  is_active: bool(),
};

export const createSmartLinkBody = Joi.object({
  ...fields,
  name: fields.name.required(),
  calendar: fields.calendar.required(),
  requires_approval: fields.requires_approval.default(false),
  signed: fields.signed.default(false),
  default_duration: fields.default_duration.default(60),
  is_active: fields.is_active.default(true),
}).unknown(true);

export const updateSmartLinkBody = Joi.object({ ...fields, name: fields.name.required(), calendar: fields.calendar.required() }).unknown(true);

export interface SmartLinkInput {
  name: string;
  calendar: string;
  requires_approval?: boolean;
  signed?: boolean;
  default_duration?: number;
  is_active?: boolean;
}

export const smartLinkParams = Joi.object({ sl: idParam('sl_') });

export const smartLinkSchema = Joi.object({
  id: Joi.string().pattern(/^sl_/).required(),
  key: Joi.string().required(),
  url: Joi.string().uri().required(),
  name: Joi.string().required(),
  calendar_uid: Joi.string().pattern(/^cal_/).required(),
  requires_approval: Joi.boolean().required(),
  signed: Joi.boolean().required(),
  is_active: Joi.boolean().required(),
  default_duration: Joi.number().integer().required(),
  previous_secret_expires_at: Joi.string().allow(null).required().description('Until then the secret before the last rotation still verifies'),
  created_at: Joi.string().required(),
  updated_at: Joi.string().required(),
  signing_secret: Joi.string().pattern(/^whsec_/).description('Only in the answers that create the secret (create, rotate-secret)'),
}).meta({ title: 'SmartLink' });

export const submissionSchema = Joi.object({
  id: Joi.string().pattern(/^sls_/).required(),
  status: Joi.string().valid('queued', 'processed', 'duplicate', 'failed').required(),
  event_public_id: Joi.string().allow(null).required(),
  error: Joi.string().allow(null).required(),
  received_at: Joi.string().allow(null).required(),
  processed_at: Joi.string().allow(null).required(),
}).meta({ title: 'SmartLinkSubmission' });

export const submissionsQuery = Joi.object({
  status: Joi.string()
    .valid('queued', 'processed', 'duplicate', 'failed')
    .description('queued: accepted and not yet recorded; without a status: the recorded ones'),
  per_page: Joi.number().integer().min(1).max(200).default(50),
  cursor: cursorParam(),
}).unknown(true);

/** What a form or webhook sends to /s/{key} (unknown fields are ignored). */
export const submissionFields = Joi.object({
  // A title of only white space names nothing: text() answers it as a missing one.
  title: label(EVENT_TEXT_CHARS.title).required(),
  start: dateInput().required().description('Alias: date_start'),
  end: dateInput().description('Alias: date_end'),
  duration: Joi.number().integer().min(0).max(525600).description('Minutes; wins over end. All-day: whole days, ceil(duration / 1440), at least one'),
  timezone: timezone().description("Default: the calendar's"),
  // As the API's event create and the job contract take (the 64 KiB body still fits it).
  description: text(EVENT_TEXT_CHARS.description),
  location: label(EVENT_TEXT_CHARS.location),
  is_all_day: bool(),
  internal_name: label(EVENT_TEXT_CHARS.internal_name),
}).unknown(true);

export interface SubmissionFields {
  title: string;
  start: string;
  end?: string;
  duration?: number;
  timezone?: string;
  description?: string;
  location?: string;
  is_all_day?: boolean;
  internal_name?: string;
}
