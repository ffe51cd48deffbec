import type { JobType, Queue } from 'bullmq';
import type { Redis } from '../../../shared/queues/redis';

/**
 * How many jobs of the submissions queue (every link's together) a `status=queued` listing
 * reads. Past it a link's queued submissions are not all listed, though each still shows
 * as queued through GET /api/smart-link-submissions/{sls}.
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
 * The payload as the gateway writes it begins with the submission and its link: the link id
 * is read off that start, which spares parsing every queued job's description (up to 50000
 * characters). Anything else is parsed whole.
 */
const HEAD = /^\{"submission":"([0-9A-Za-z]{16})","link":\{"id":(\d+),"teamId":\d+,"calendarId":\d+\},"receivedAt":"([^"\\]+)"/;

function ofLink(data: string, linkId: number): QueuedSubmission | null {
  const m = HEAD.exec(data);
  if (m) return Number(m[2]) === linkId ? { uid: m[1], receivedAt: m[3] } : null;
  try {
    const job = JSON.parse(data) as { submission?: unknown; link?: { id?: unknown }; receivedAt?: unknown };
    return job.link?.id === linkId && typeof job.submission === 'string' && typeof job.receivedAt === 'string' ? { uid: job.submission, receivedAt: job.receivedAt } : null;
  } catch {
    return null;
  }
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
      const hit = typeof data === 'string' ? ofLink(data, linkId) : null;
      if (hit) found.push(hit);
    }
  }
  return found;
}
