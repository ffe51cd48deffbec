import type { Redis } from './redis';
import { groupJobId } from './smart-link.job';

/**
 * What the service knows of a smart-link submission between its 202 and its record in
 * Postgres: written by the gateway once the submission's job is stored, removed by the
 * smart-link worker once the job's submissions are recorded. The management API lists a
 * link's queued submissions and answers a submission's status from here, never from the
 * queue's own stored jobs.
 *
 * - `{prefix}:sls-job:{jobId}`: `teamId:linkId`, one per job (a group's serves up to a
 *   hundred submissions), expiring after INDEX_TTL_SECONDS.
 * - `{prefix}:sls-queued:{linkId}`: the link's queued submission ids, scored by receipt time.
 * - `{prefix}:sls-failed:{linkId}`: those whose job was given up on, scored the same.
 *
 * A submission's job is its own (id = the submission's) or its group's (named after the
 * id's first characters, see groupJobId). Every key is under the queue prefix, so in a
 * Redis Cluster all of them share the queues' hash-tag slot and one MULTI writes them.
 */
const INDEX_TTL_SECONDS = 30 * 86_400;

interface QueuedEntry {
  uid: string;
  teamId: number;
  linkId: number;
  receivedAtMs: number;
  jobId: string;
  failed: boolean;
}

const jobKey = (prefix: string, jobId: string) => `${prefix}:sls-job:${jobId}`;
const queuedKey = (prefix: string, linkId: number) => `${prefix}:sls-queued:${linkId}`;
const failedKey = (prefix: string, linkId: number) => `${prefix}:sls-failed:${linkId}`;

interface IndexedJob {
  jobId: string;
  teamId: number;
  linkId: number;
  submissions: Array<{ uid: string; receivedAtMs: number }>;
}

/** Records jobs Redis has just stored, with their submissions. */
export async function indexQueued(redis: Redis, prefix: string, jobs: IndexedJob[]): Promise<void> {
  if (!jobs.length) return;
  const multi = redis.multi();
  for (const job of jobs) {
    multi.set(jobKey(prefix, job.jobId), `${job.teamId}:${job.linkId}`, 'EX', INDEX_TTL_SECONDS);
    multi.zadd(queuedKey(prefix, job.linkId), ...job.submissions.flatMap((s) => [s.receivedAtMs, s.uid]));
    multi.expire(queuedKey(prefix, job.linkId), INDEX_TTL_SECONDS);
  }
  await multi.exec();
}

/** Forgets a job whose submissions are recorded (Postgres answers for them now). */
export async function unindexJob(redis: Redis, prefix: string, jobId: string, linkId: number, uids: string[]): Promise<void> {
  await redis.multi().del(jobKey(prefix, jobId)).zrem(queuedKey(prefix, linkId), ...uids).exec();
}

/** A job given up on: its submissions leave the queued listing and read as failed. */
export async function failJob(redis: Redis, prefix: string, linkId: number, uids: string[]): Promise<void> {
  const multi = redis.multi();
  for (const uid of uids) multi.zscore(queuedKey(prefix, linkId), uid);
  const scores = ((await multi.exec()) ?? []).map(([, score]) => score as string | null);
  const moved = uids.flatMap((uid, i) => (scores[i] === null ? [] : [Number(scores[i]), uid]));
  if (!moved.length) return;
  await redis
    .multi()
    .zadd(failedKey(prefix, linkId), ...moved)
    .expire(failedKey(prefix, linkId), INDEX_TTL_SECONDS)
    .zrem(queuedKey(prefix, linkId), ...uids)
    .exec();
}

const TEAM_LINK = /^(\d+):(\d+)$/;

/** A submission's entry, or null when there is none (never queued, recorded, or expired). */
export async function queuedEntry(redis: Redis, prefix: string, uid: string): Promise<QueuedEntry | null> {
  for (const jobId of [uid, groupJobId(uid)]) {
    const m = TEAM_LINK.exec((await redis.get(jobKey(prefix, jobId))) ?? '');
    if (!m) continue;
    const linkId = Number(m[2]);
    const [queued, failed] = await Promise.all([redis.zscore(queuedKey(prefix, linkId), uid), redis.zscore(failedKey(prefix, linkId), uid)]);
    const score = queued ?? failed;
    if (score !== null) return { uid, teamId: Number(m[1]), linkId, receivedAtMs: Number(score), jobId, failed: queued === null };
  }
  return null;
}

/** Where a page of queued submissions ended: the last one's receipt time and uid. */
export type QueuedKey = [receivedAtMs: number, uid: string];

/**
 * A link's queued submissions, newest first (receipt time, then uid, both descending), after
 * `after`. Reads `limit` entries and a few more per round trip: the cost is the page's, not
 * the backlog's.
 */
export async function queuedPage(redis: Redis, prefix: string, linkId: number, after: QueuedKey | undefined, limit: number): Promise<QueuedKey[]> {
  const out: QueuedKey[] = [];
  const max = after ? String(after[0]) : '+inf';
  let offset = 0;
  const chunk = limit + 16;
  for (;;) {
    const flat = await redis.zrange(queuedKey(prefix, linkId), max, '-inf', 'BYSCORE', 'REV', 'LIMIT', offset, chunk, 'WITHSCORES');
    for (let i = 0; i < flat.length; i += 2) {
      const key: QueuedKey = [Number(flat[i + 1]), flat[i]];
      // Members of one score come in reverse order of their text: skip those at or before the cursor.
      if (after && key[0] === after[0] && key[1] >= after[1]) continue;
      out.push(key);
      if (out.length === limit) return out;
    }
    if (flat.length < 2 * chunk) return out;
    offset += chunk;
  }
}
