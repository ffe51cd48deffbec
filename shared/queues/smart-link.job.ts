import Joi from 'joi';
import { defineJob, type JobMeta, QUEUES, RETRY_THROUGH_OUTAGES } from './queues';

/**
 * A submission the gateway accepted for a smart link, already checked and normalized: the
 * times are resolved (link defaults and calendar zone applied) and the event's identity is
 * fixed, so the worker only writes. The job id is the submission id.
 */
export interface SmartLinkJob {
  submission: string; // sls uid
  link: { id: number; teamId: number; calendarId: number };
  receivedAt: string; // ISO
  event: {
    uid: string; // identity of the content: identical submissions to a link share it
    title: string;
    description: string | null; // as sent; the worker sanitizes it
    location: string | null;
    internal_name: string | null;
    is_all_day: boolean;
    timezone: string;
    date_start: string;
    date_end: string;
    ends_at: string;
    status: 'approved' | 'pending';
  };
  meta?: JobMeta;
}

/**
 * Text the gateway has checked against its limits in characters (code points). Here the
 * bound is in UTF-16 units, two per character at most: it refuses only payloads no gateway
 * writes, with joi's built-in rule, which costs the worker less per job than counting.
 */
const bounded = (chars: number) => Joi.string().max(2 * chars);
const nullableText = (chars: number) => bounded(chars).allow(null).required();

/**
 * A UTC instant as the gateway writes it (`2030-09-14T10:00:00.000Z`, or without the
 * milliseconds for all-day days), for a day and time that exist: it must read back to the
 * same wall time. Cheaper than joi's isoDate(), whose catch-all ISO 8601 pattern cost the
 * worker more than the rest of the job's check together; and a value Postgres would refuse
 * must fail its own job here, not the batch it would be written with.
 */
const INSTANT = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.\d{1,3})?Z$/;
const isInstant = (value: string) => {
  const m = INSTANT.exec(value);
  const ms = m ? Date.parse(value) : NaN;
  return !Number.isNaN(ms) && new Date(ms).toISOString().startsWith((m as RegExpExecArray)[1]);
};
const instant = () =>
  Joi.string()
    .max(40)
    .custom((value: string, helpers) => (isInstant(value) ? value : helpers.error('string.isoDate')))
    .required();

export const smartLinkJob = defineJob<SmartLinkJob>({
  queue: QUEUES.smartLinkSubmissions,
  schema: Joi.object({
    submission: Joi.string().pattern(/^[0-9A-Za-z]{16}$/).required(),
    link: Joi.object({ id: Joi.number().integer().required(), teamId: Joi.number().integer().required(), calendarId: Joi.number().integer().required() }).required(),
    receivedAt: instant(),
    event: Joi.object({
      uid: Joi.string().pattern(/^[0-9A-Za-z]{16}$/).required(),
      title: bounded(255).required(),
      description: nullableText(50000),
      location: nullableText(255),
      internal_name: nullableText(255),
      is_all_day: Joi.boolean().required(),
      timezone: Joi.string().max(64).required(),
      date_start: instant(),
      date_end: instant(),
      ends_at: instant(),
      status: Joi.string().valid('approved', 'pending').required(),
    }).required(),
    meta: Joi.object({ requestId: Joi.string() }),
  }),
  // Transient failures (Postgres away) retry for hours with a capped backoff, so an outage
  // delays accepted submissions but never drops them.
  defaults: RETRY_THROUGH_OUTAGES,
});
