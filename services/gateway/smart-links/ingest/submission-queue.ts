import type { JobsOptions, Queue } from 'bullmq';
import { unavailable } from '../../../../shared/errors/app-error';
import { newUid, randomBase62, UID_LENGTH } from '../../../../shared/ids/ids';
import type { Logger } from '../../../../shared/logging/logger';
import type { Producer } from '../../../../shared/queues/queues';
import { isRedisUnavailableError, mayHaveRun, type Redis } from '../../../../shared/queues/redis';
import { GROUP_PREFIX_LENGTH, groupJobId, type SingleSubmissionJob, type SmartLinkJob, SUBMISSIONS_PER_JOB, type SubmissionLink } from '../../../../shared/queues/smart-link.job';

type Entry = SmartLinkJob['submissions'][number];

interface Member {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** One job in the making: a link's submissions of this turn, or one submission alone. */
interface Group {
  jobId: string;
  link: SubmissionLink;
  entries: Entry[];
  members: Member[];
  bytes: number;
  opts: JobsOptions;
}

export interface Queued {
  /** The submission's id (its `sls_` id without the prefix). */
  uid: string;
  /** The job holding it. */
  jobId: string;
  /** Settles once Redis has stored the job (a 503 AppError when it could not). */
  stored: Promise<void>;
}

/**
 * A group's job is gone once done: the submission records in Postgres say what became of
 * each, and a group can hold a hundred submissions' payloads. Jobs of their own (a delivery
 * key's, whose id keeps a repeated delivery from being queued again) keep the queue's
 * retention.
 */
const GROUP_JOB: JobsOptions = { removeOnComplete: true };
/**
 * How long an add whose outcome is unknown (Redis's reply was lost) is tried again before the
 * requests are answered 503. The adds name their job ids, so a second add of a job Redis did
 * store is a no-op: once one succeeds, the submissions are stored, and answered 202.
 */
export const UNSURE_RETRY_MS = 4000;

/** A group is closed past this many bytes of payload, whatever its count. */
const GROUP_BYTES = 512 * 1024;

/**
 * Queues accepted submissions. Those of one turn of the event loop go to Redis together, in
 * one addBulk, and those of one link in one job (up to SUBMISSIONS_PER_JOB, GROUP_BYTES):
 * the per-job work of BullMQ, in this process, in Redis and in the worker, is paid once per
 * group instead of once per submission. Each request still waits for its own submission
 * to be stored: its promise settles when the addBulk holding it does (a 503 if Redis
 * refuses).
 */
export class SubmissionQueue {
  private open = new Map<number, Group>();
  private closed: Group[] = [];
  private count = 0;
  private scheduled = false;

  constructor(
    private readonly producer: Pick<Producer<SmartLinkJob | SingleSubmissionJob>, 'queue' | 'stamped'>,
    private readonly connection: Redis,
    private readonly logger: Logger,
    private readonly maxPerFlush = 500,
  ) {}

  /**
   * Queues one submission. `uid` (a delivery key's) or `alone` (its outcome is awaited) make
   * it a job of its own, named by its id; otherwise it joins its link's group of this turn
   * and its id is made here, under the group's prefix. `bytes`: its payload's size, roughly.
   */
  add(link: SubmissionLink, entry: Omit<Entry, 'submission'>, opts: { uid?: string; alone?: boolean; bytes: number }): Queued {
    // A connection that is not ready would hold the batch until it is; answer now instead.
    if (this.connection.status !== 'ready') throw unavailable();
    let group: Group;
    let uid: string;
    if (opts.uid !== undefined || opts.alone) {
      uid = opts.uid ?? newUid();
      group = { jobId: uid, link, entries: [], members: [], bytes: 0, opts: {} };
      this.closed.push(group);
    } else {
      let current = this.open.get(link.id);
      if (!current || current.entries.length >= SUBMISSIONS_PER_JOB || current.bytes + opts.bytes > GROUP_BYTES) {
        if (current) this.closed.push(current);
        current = { jobId: groupJobId(randomBase62(GROUP_PREFIX_LENGTH)), link, entries: [], members: [], bytes: 0, opts: GROUP_JOB };
        this.open.set(link.id, current);
      }
      group = current;
      uid = group.jobId.slice(-GROUP_PREFIX_LENGTH) + randomBase62(UID_LENGTH - GROUP_PREFIX_LENGTH);
    }
    group.entries.push({ submission: uid, ...entry });
    group.bytes += opts.bytes;
    const stored = new Promise<void>((resolve, reject) => group.members.push({ resolve, reject }));
    if (++this.count >= this.maxPerFlush) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    return { uid, jobId: group.jobId, stored };
  }

  private flush(): void {
    this.scheduled = false;
    const groups = [...this.closed, ...this.open.values()];
    this.closed = [];
    this.open.clear();
    this.count = 0;
    if (!groups.length) return;
    const jobs = groups.map((g) => ({
      name: 'submissions',
      data: this.producer.stamped<SmartLinkJob>({ link: g.link, submissions: g.entries }),
      opts: { ...g.opts, jobId: g.jobId },
    }));
    this.store(jobs).then(
      () => groups.forEach((g) => g.members.forEach((m) => m.resolve())),
      (err: unknown) => {
        const gone = isRedisUnavailableError(err);
        const submissions = groups.reduce((n, g) => n + g.entries.length, 0);
        // The error's message only: a failed command's text would carry every submission of the batch.
        this.logger.warn({ err: (err as Error).message?.slice(0, 200), submissions }, gone ? 'could not queue submissions: Redis unavailable' : 'could not queue submissions');
        groups.forEach((g) => g.members.forEach((m) => m.reject(gone ? unavailable() : err)));
      },
    );
  }

  /**
   * One addBulk; when it fails in a way that leaves its outcome unknown (see mayHaveRun),
   * the same jobs again, under the same ids, until one answers or UNSURE_RETRY_MS pass.
   * Past that the 503 may be for submissions that were stored: a retry by the sender with
   * the same delivery key (or the same content) is safe, as docs/smart-links.md says.
   */
  private async store(jobs: Parameters<Queue['addBulk']>[0]): Promise<void> {
    const deadline = Date.now() + UNSURE_RETRY_MS;
    let unsure = false;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.producer.queue.addBulk(jobs);
        if (unsure) this.logger.info({ jobs: jobs.length, attempt }, 'queued submissions on a retry after a lost reply');
        return;
      } catch (err) {
        unsure ||= mayHaveRun(err);
        if (!unsure || Date.now() >= deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.min(500, 50 * 2 ** attempt)));
      }
    }
  }
}
