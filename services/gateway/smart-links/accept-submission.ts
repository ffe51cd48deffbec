import { parseDateInput } from '../../../shared/calendar/dates';
import { lastDayAfterMinutes, plusMinutesIso, resolveEventTimes } from '../calendar/event-times';
import { type FieldErrors, validationFailed } from '../../../shared/errors/app-error';
import { type SmartLinkSubmission, smartLinkJob } from '../../../shared/queues/smart-link.job';
import type { AppContext } from '../context';
import { validatePart } from '../http/validation';
import { SubmissionQueue, type Queued } from './ingest/submission-queue';
import type { IngestLink } from './smart-links.repository';
import { submissionFields, type SubmissionFields } from './smart-links.schemas';
import { derivedUid } from './secrets';
import { newUid } from '../../../shared/ids/ids';

/**
 * The one owner of "a submission to a smart link becomes a queued job": it checks the
 * fields, decides the event (times with the link's defaults and the calendar's zone, its
 * status), its identity (identical content to one link is one event), the submission's id
 * (a delivery key's, or a new one), and queues it through the smart-link Producer, indexed
 * for the management API. The HTTP edge (ingest.ts) only reads, verifies and answers.
 */
interface AcceptOptions {
  /** `webhook-id` or `Idempotency-Key`: a repeated delivery is the same submission. */
  deliveryKey?: string;
  /** The sender waits for the event (a platform redirect): the submission is a job of its own. */
  awaited: boolean;
  requestId: string;
  nowMs: number;
  /** The body's size, for the grouping's byte bound. */
  bytes: number;
}

type AcceptSubmission = (link: IngestLink, fields: Record<string, unknown>, opts: AcceptOptions) => Promise<Queued>;

export function acceptSubmission(ctx: AppContext): AcceptSubmission {
  const queue = new SubmissionQueue(ctx.queues.producer(smartLinkJob), ctx.redis, ctx.logger, ctx.config.queuePrefix);
  const { appKey } = ctx.config;
  return async (link, raw, opts) => {
    const { value: fields, errors } = validatePart<SubmissionFields>(submissionFields, normalizeFields(raw));
    let problems: FieldErrors = errors;
    let timing: ReturnType<typeof submissionTimes> | null = null;
    if (!Object.keys(problems).length) {
      timing = submissionTimes(fields, link);
      if ('errors' in timing.times) problems = timing.times.errors;
    }
    if (!timing || 'errors' in timing.times) throw validationFailed(problems);

    const event: SmartLinkSubmission['event'] = {
      uid: '',
      title: fields.title,
      description: fields.description ?? null,
      location: fields.location ?? null,
      internal_name: fields.internal_name ?? null,
      is_all_day: timing.allDay,
      timezone: timing.zone,
      ...timing.times.times,
      status: link.requires_approval ? 'pending' : 'approved',
    };
    // Identical content sent to the same link is the same event.
    event.uid = derivedUid(appKey, `evt:${link.id}:${JSON.stringify(event)}`);
    // A repeated delivery (same webhook-id or Idempotency-Key) gets the same id, and so the
    // same job id: it is taken, and nothing new is queued. Scoped by the link's random uid,
    // never its row id, so no link of another database can share it. One awaited (a
    // platform redirect) is a job of its own too; any other gets its id in its group's.
    const uid = opts.deliveryKey ? derivedUid(appKey, `sls:${link.uid}:${opts.deliveryKey}`) : opts.awaited ? newUid() : undefined;
    const queued = queue.add(
      { id: link.id, teamId: link.team_id, calendarId: link.calendar_id },
      { receivedAt: new Date(opts.nowMs).toISOString(), event, meta: { requestId: opts.requestId } },
      { uid, bytes: opts.bytes },
    );
    await queued.stored;
    return queued;
  };
}

/** Empty form fields count as not sent; `date_start`/`date_end` are aliases. */
function normalizeFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== '' && v !== null) out[k] = v;
  if (out.start === undefined && out.date_start !== undefined) out.start = out.date_start;
  if (out.end === undefined && out.date_end !== undefined) out.end = out.date_end;
  return out;
}

/** The stored times of a submission: link defaults and the calendar's zone applied. */
function submissionTimes(fields: SubmissionFields, link: IngestLink): { times: ReturnType<typeof resolveEventTimes>; zone: string; allDay: boolean } {
  const zone = fields.timezone ?? link.calendar_timezone;
  const start = parseDateInput(fields.start);
  const allDay = fields.is_all_day ?? start?.kind === 'date';
  let end = fields.end;
  const endFromStart = Boolean(start) && (fields.duration !== undefined || end === undefined);
  if (start && endFromStart) {
    // All-day: a duration counts in whole days (at least one); with neither it nor an end
    // the event is the start day alone, as for the API's simplified create.
    if (allDay) end = fields.duration === undefined ? fields.start : lastDayAfterMinutes(start, zone, fields.duration);
    else end = plusMinutesIso(start, zone, fields.duration ?? link.default_duration);
  }
  const times = resolveEventTimes({ isAllDay: allDay, start: fields.start, end: end ?? fields.start, timezone: zone, startField: 'start', endField: 'end', endFromStart });
  return { times, zone, allDay };
}

