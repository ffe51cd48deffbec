import type { JobsOptions } from 'bullmq';
import type { Logger } from '../../../../shared/logging/logger';
import type { Producer } from '../../../../shared/queues/queues';
import { type Redis, requireReady } from '../../../../shared/queues/redis';
import { newGroupJobId, newMemberUid, type SmartLinkJob, SUBMISSIONS_PER_JOB, type SubmissionLink } from '../../../../shared/queues/smart-link.job';
import { indexQueued } from '../../../../shared/queues/submission-index';

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
    private readonly producer: Pick<Producer<SmartLinkJob>, 'addBulk'>,
    private readonly connection: Redis,
    private readonly logger: Logger,
    private readonly prefix: string,
    private readonly maxPerFlush = 500,
  ) {}

  /**
   * Queues one submission. With a `uid` (a delivery key's, or one awaited alone) it is a job
   * of its own, named by that id; otherwise it joins its link's group of this turn, under
   * an id of that group (see newMemberUid). `bytes`: its payload's size, roughly.
   */
  add(link: SubmissionLink, entry: Omit<Entry, 'submission'>, opts: { uid?: string; bytes: number }): Queued {
    requireReady(this.connection);
    let group: Group;
    let uid: string;
    if (opts.uid !== undefined) {
      uid = opts.uid;
      group = { jobId: uid, link, entries: [], members: [], bytes: 0, opts: {} };
      this.closed.push(group);
    } else {
      let current = this.open.get(link.id);
      if (!current || current.entries.length >= SUBMISSIONS_PER_JOB || current.bytes + opts.bytes > GROUP_BYTES) {
        if (current) this.closed.push(current);
        current = { jobId: newGroupJobId(), link, entries: [], members: [], bytes: 0, opts: GROUP_JOB };
        this.open.set(link.id, current);
      }
      group = current;
      uid = newMemberUid(group.jobId);
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
    const jobs = groups.map((g) => ({ name: 'submissions', data: { link: g.link, submissions: g.entries }, opts: { ...g.opts, jobId: g.jobId } }));
    this.store(jobs, groups).then(
      () => groups.forEach((g) => g.members.forEach((m) => m.resolve())),
      (err: unknown) => groups.forEach((g) => g.members.forEach((m) => m.reject(err))),
    );
  }

  /**
   * The jobs, through the Producer (checked against the queue's contract, retried under the
   * same ids when Redis's reply is lost), then the submissions' index entries. The 202s wait
   * for both; an index that could not be written is logged and the submissions stand: their
   * jobs are stored, and the worker records each one.
   */
  private async store(jobs: Parameters<Producer<SmartLinkJob>['addBulk']>[0], groups: Group[]): Promise<void> {
    await this.producer.addBulk(jobs);
    const indexed = groups.map((g) => ({
      jobId: g.jobId,
      teamId: g.link.teamId,
      linkId: g.link.id,
      submissions: g.entries.map((e) => ({ uid: e.submission, receivedAtMs: Date.parse(e.receivedAt) })),
    }));
    try {
      await indexQueued(this.connection, this.prefix, indexed);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message?.slice(0, 200), jobs: indexed.length }, 'could not index queued submissions; their jobs are stored');
    }
  }
}
