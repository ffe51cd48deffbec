import { randomBase62, UID_LENGTH } from '../ids/ids';
import { compiledSchema } from './json-schema';
import { EVENT_TEXT_CHARS } from '../events/limits';
import { defineJob, type JobMeta, jobMetaJsonSchema, QUEUES, RETRY_THROUGH_OUTAGES } from './queues';

/** The link a submission came through, with the team and calendar its event goes to. */
export interface SubmissionLink {
  id: number;
  teamId: number;
  calendarId: number;
}

/**
 * A submission the gateway accepted for a smart link, already checked and normalized: the
 * times are resolved (link defaults and calendar zone applied) and the event's identity is
 * fixed, so the worker only writes.
 */
export interface SmartLinkSubmission {
  submission: string; // sls uid
  link: SubmissionLink;
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
  /** The request that sent it: its log lines and the worker's carry the same id. */
  meta?: JobMeta;
}

/**
 * A job: submissions to one link. Those a gateway accepts in one turn of its event loop go
 * together, up to SUBMISSIONS_PER_JOB (BullMQ's work per job, in the gateway, in Redis and
 * in the worker, is then paid once for all of them); a submission sent with a delivery key,
 * or waited on for a platform redirect, is a job of its own.
 */
export interface SmartLinkJob {
  link: SubmissionLink;
  submissions: Array<Omit<SmartLinkSubmission, 'link'>>;
  /** The job's own (its database); each submission's meta names the request that sent it. */
  meta?: JobMeta;
}

/** What became of a submission (its record says the same). */
export interface SubmissionOutcome {
  status: 'processed' | 'duplicate' | 'failed';
  /** The uid of its event: the one it made, or the identical one it is a duplicate of. */
  event: string | null;
  error: string | null;
}

/** A job's return value: the outcome of each of its submissions, by submission uid. */
export type SubmissionOutcomes = Record<string, SubmissionOutcome>;

export const SUBMISSIONS_PER_JOB = 100;

/**
 * Submissions queued together without a delivery key share the first GROUP_PREFIX_LENGTH
 * characters of their ids (random per group, the rest random per submission), and their
 * job is named after that prefix: a queued submission's job is found from its id alone.
 */
export const GROUP_PREFIX_LENGTH = 10;
export const groupJobId = (uidOrPrefix: string): string => `group-${uidOrPrefix.slice(0, GROUP_PREFIX_LENGTH)}`;

/** A new group's job id (its prefix random). */
export const newGroupJobId = (): string => groupJobId(randomBase62(GROUP_PREFIX_LENGTH));

/** A new submission id in the group of this job: the group's prefix, then random characters. */
export const newMemberUid = (groupJob: string): string => groupJob.slice(-GROUP_PREFIX_LENGTH) + randomBase62(UID_LENGTH - GROUP_PREFIX_LENGTH);

/** The submissions of a job, each with its link. */
export function submissionsOf(data: SmartLinkJob): SmartLinkSubmission[] {
  return data.submissions.map((s) => ({ ...s, link: data.link }));
}

/**
 * A UTC instant as the gateway writes it (`2030-09-14T10:00:00.000Z`, or without the
 * milliseconds for all-day days), for a day and time that exist: it must read back to the
 * same wall time. A value Postgres would refuse must fail its own job here, not the batch
 * it would be written with.
 */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,3})?Z$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
/**
 * Checked field by field (every job's four instants, on the busiest queue): the same
 * answer as reading it with Date and back, without making two Dates and a string.
 */
const isInstant = (value: string) => {
  const m = INSTANT.exec(value);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  if (day > (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1])) return false;
  return Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 60;
};

/** Text the gateway has checked against its limits in characters (code points, as JSON Schema counts them). */
const bounded = (chars: number) => ({ type: 'string', minLength: 1, maxLength: chars }) as const;
const nullableText = (chars: number) => ({ type: ['string', 'null'], minLength: 1, maxLength: chars }) as const;
const instant = { type: 'string', maxLength: 40, format: 'instant' } as const;
const uid = { type: 'string', pattern: '^[0-9A-Za-z]{16}$' } as const;
const object = (properties: Record<string, unknown>, optional: string[] = []) => ({
  type: 'object',
  properties,
  required: Object.keys(properties).filter((key) => !optional.includes(key)),
  additionalProperties: false,
});
const link = object({ id: { type: 'integer' }, teamId: { type: 'integer' }, calendarId: { type: 'integer' } });
const submission = object(
  {
    submission: uid,
    receivedAt: instant,
    event: object({
      uid,
      title: bounded(EVENT_TEXT_CHARS.title),
      description: nullableText(EVENT_TEXT_CHARS.description),
      location: nullableText(EVENT_TEXT_CHARS.location),
      internal_name: nullableText(EVENT_TEXT_CHARS.internal_name),
      is_all_day: { type: 'boolean' },
      timezone: { type: 'string', minLength: 1, maxLength: 64 },
      date_start: instant,
      date_end: instant,
      ends_at: instant,
      status: { enum: ['approved', 'pending'] },
    }),
    meta: jobMetaJsonSchema,
  },
  ['meta'],
);

/**
 * The busiest queue (every accepted submission), so its payloads are checked by a compiled
 * JSON Schema rather than joi: the gateway checks each job as it queues it, the worker as it
 * takes it (json-schema.ts).
 */
export const smartLinkJob = defineJob<SmartLinkJob>({
  queue: QUEUES.smartLinkSubmissions,
  schema: compiledSchema<SmartLinkJob>(
    object({ link, submissions: { type: 'array', items: submission, minItems: 1, maxItems: SUBMISSIONS_PER_JOB }, meta: jobMetaJsonSchema }, ['meta']),
    { instant: { test: isInstant, means: 'a UTC instant (2030-09-14T10:00:00.000Z) of a day and time that exist' } },
  ),
  // Transient failures (Postgres away) retry for hours with a capped backoff, so an outage
  // delays accepted submissions but never drops them.
  defaults: RETRY_THROUGH_OUTAGES,
});
