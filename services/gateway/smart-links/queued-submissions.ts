import type { Job, JobType, Queue } from 'bullmq';
import type { Redis } from '../../../shared/queues/redis';
import { jobIdsOf, type SingleSubmissionJob, type SmartLinkJob, type SmartLinkSubmission, submissionsOf } from '../../../shared/queues/smart-link.job';

/**
 * How many jobs of the submissions queue (every link's together; a job holds one or more
 * submissions of one link) a `status=queued` listing reads. Past it a link's queued
 * submissions are not all listed, though each still shows as queued through
 * GET /api/smart-link-submissions/{sls}.
 */
export const QUEUED_SCAN_LIMIT = 10_000;

/** Not yet turned into an outcome: being worked on first, then the newest waiting. */
const QUEUED_STATES: JobType[] = ['active', 'wait', 'paused', 'prioritized', 'delayed'];
const CHUNK = 500;

export interface QueuedSubmission {
  uid: string;
  receivedAt: string;
}

/**
 * A job's payload as the gateway writes it begins with its link, and each of its
 * submissions with its id and receipt time: both are read off the text, which spares
 * parsing the payloads (up to a hundred submissions a job, each with a description of up
 * to 50000 characters). JSON escapes every quote inside a value, so MEMBER cannot match
 * within a description. Anything else (a job of the previous release) is parsed whole.
 */
const HEAD = /^\{"link":\{"id":(\d+),"teamId":\d+,"calendarId":\d+\},"submissions":\[/;
const MEMBER = /\{"submission":"([0-9A-Za-z]{16})","receivedAt":"([^"\\]+)"/g;

/** A job's submissions; none when its payload is not one a gateway writes (a job that failed for it). */
function membersOf(data: unknown): Array<Partial<SmartLinkSubmission>> {
  try {
    return submissionsOf(data as SmartLinkJob | SingleSubmissionJob).filter((s) => typeof s === 'object' && s !== null);
  } catch {
    return [];
  }
}

function ofLink(data: string, linkId: number): QueuedSubmission[] {
  const head = HEAD.exec(data);
  if (head) return Number(head[1]) === linkId ? [...data.matchAll(MEMBER)].map((m) => ({ uid: m[1], receivedAt: m[2] })) : [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return [];
  }
  return membersOf(parsed)
    .filter((s) => s.link?.id === linkId && typeof s.submission === 'string' && typeof s.receivedAt === 'string')
    .map((s) => ({ uid: s.submission as string, receivedAt: s.receivedAt as string }));
}

/** A submission still in Redis, found through the job its id names, with that job. */
export async function findQueuedSubmission(queue: Queue, uid: string): Promise<{ job: Job; submission: Partial<SmartLinkSubmission> } | null> {
  for (const id of jobIdsOf(uid)) {
    const job = await queue.getJob(id);
    const submission = job && membersOf(job.data).find((s) => s.submission === uid);
    if (job && submission) return { job, submission };
  }
  return null;
}

/**
 * A link's submissions still in the queue (at most QUEUED_SCAN_LIMIT jobs looked at), in
 * no particular order. Payloads are read a chunk at a time: a few hundred per round trip,
 * never all of them in memory at once.
 */
export async function queuedSubmissionsOf(redis: Redis, queue: Queue, linkId: number): Promise<QueuedSubmission[]> {
  const ids = (await queue.getRanges(QUEUED_STATES, 0, QUEUED_SCAN_LIMIT - 1)).slice(0, QUEUED_SCAN_LIMIT);
  const found: QueuedSubmission[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) {
    const pipeline = redis.pipeline();
    for (const id of ids.slice(i, i + CHUNK)) pipeline.hget(queue.toKey(id), 'data');
    for (const [err, data] of (await pipeline.exec()) ?? []) {
      if (err) throw err;
      if (typeof data === 'string') found.push(...ofLink(data, linkId));
    }
  }
  return found;
}
