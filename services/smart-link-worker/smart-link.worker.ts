import { publishInvalidations } from '../../shared/cache/invalidation';
import type { Knex } from '../../shared/db/knex';
import { startRetention, SUBMISSION_RECORDS } from '../../shared/db/retention';
import { startTeamPurge } from './team-purge';
import type { Logger } from '../../shared/logging/logger';
import { eventLimitRejections } from '../../shared/metrics/metrics';
import {
  type SmartLinkJob,
  type SmartLinkSubmission,
  smartLinkJob,
  type SubmissionOutcome,
  type SubmissionOutcomes,
  submissionsOf,
} from '../../shared/queues/smart-link.job';
import { failJob, unindexJob } from '../../shared/queues/submission-index';
import type { WorkerContext, WorkerDefinition } from '../../shared/queues/worker';
import { writeBatch } from './write-batch';

interface Waiting {
  submission: SmartLinkSubmission;
  resolve: (outcome: SubmissionOutcome) => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers the submissions of the jobs BullMQ hands the worker concurrently and writes them
 * in batches: one transaction and a few multi-row statements per batch instead of several
 * round trips per submission. Each submission still settles on its own: with its outcome,
 * or with the batch's error so BullMQ retries its job.
 */
class SubmissionBatcher {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | null = null;
  private inFlight = 0;

  constructor(
    private readonly ctx: Pick<WorkerContext, 'db' | 'clock' | 'redis' | 'config'> & { logger: Logger },
    private readonly opts: { maxBatch: number; maxWaitMs: number; maxInFlight: number } = { maxBatch: 500, maxWaitMs: 5, maxInFlight: 2 },
  ) {}

  submit(submission: SmartLinkSubmission): Promise<SubmissionOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ submission, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.inFlight >= this.opts.maxInFlight) return;
    if (this.waiting.length >= this.opts.maxBatch) {
      this.flush();
      return;
    }
    this.timer ??= setTimeout(() => this.flush(), this.opts.maxWaitMs);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.waiting.length || this.inFlight >= this.opts.maxInFlight) return;
    const batch = this.waiting.splice(0, this.opts.maxBatch);
    this.inFlight++;
    this.write(this.ctx.db, batch).finally(() => {
      this.inFlight--;
      if (this.waiting.length) this.schedule();
    });
  }

  private async write(db: Knex, batch: Waiting[]): Promise<void> {
    try {
      const { outcomes, calendarsChanged } = await writeBatch(db, batch.map((w) => w.submission), this.ctx.clock.now(), this.ctx.config.publicBaseUrl);
      for (const w of batch) w.resolve(outcomes.get(w.submission.submission) as SubmissionOutcome);
      // Calendar feeds cached by the gateways must include the new events.
      await publishInvalidations(
        this.ctx.redis,
        this.ctx.config.queuePrefix,
        [...calendarsChanged].map((id) => ({ kind: 'calendar-events' as const, id })),
        this.ctx.logger,
      );

    } catch (err) {
      this.ctx.logger.warn({ err: (err as Error).message, submissions: batch.length }, 'submission batch failed; its jobs will retry');
      for (const w of batch) w.reject(err);
    }
  }
}

/**
 * Jobs taken at once. A job holds one submission (sent with a delivery key) up to
 * SUBMISSIONS_PER_JOB (a flood's groups hold a few dozen): enough to keep the batcher's
 * transactions full either way (`npm run bench -- drain` compares settings), while at most
 * 50k submissions wait in memory.
 */
const SMART_LINK_CONCURRENCY = 500;

/**
 * The smart-link worker: high concurrency feeding the batcher; records older than
 * SUBMISSION_RETENTION_DAYS pruned, and teams deleted TEAM_PURGE_DELAY_MINUTES ago purged.
 */
export function smartLinkWorker(ctx: WorkerContext): WorkerDefinition<SmartLinkJob, SubmissionOutcomes> {
  const batcher = new SubmissionBatcher(ctx);
  const retention = startRetention(ctx, SUBMISSION_RECORDS, ctx.config.submissionRetentionDays);
  const purge = startTeamPurge(ctx, ctx.config.teamPurgeDelayMinutes);
  const limitRejections = eventLimitRejections(ctx.metrics);
  return {
    contract: smartLinkJob,
    concurrency: SMART_LINK_CONCURRENCY,
    process: async (job, _ctx, log) => {
      const submissions = submissionsOf(job.data);
      const uids = submissions.map((s) => s.submission);
      const outcomes = await Promise.all(submissions.map((s) => batcher.submit(s)));
      // Recorded: off the queued index (left there, each is still answered from its record, which comes first).
      await unindexJob(ctx.redis, ctx.config.queuePrefix, job.id as string, job.data.link.id, uids).catch((err: unknown) =>
        log.warn({ err: (err as Error).message?.slice(0, 200) }, 'could not take recorded submissions off the queued index'),
      );
      const result: SubmissionOutcomes = {};
      submissions.forEach(({ submission, meta }, i) => {
        const outcome = outcomes[i];
        result[submission] = outcome;
        // One line per submission, with the request id that queued it: a submission can be
        // followed from the gateway's request to its event.
        if (outcome.status === 'failed') log.info({ reqId: meta?.requestId, submission, error: outcome.error }, 'submission failed');
        else log.info({ reqId: meta?.requestId, submission, status: outcome.status, event: outcome.event }, 'submission processed');
        if (outcome.error === 'event_limit_exceeded') limitRejections.inc({ source: 'smart_link' });
      });
      return result;
    },
    // Off the queued listing: each of its submissions reads as failed by its id. The data
    // may break the contract (that is one way to be given up on): read defensively.
    givenUp: async (job) => {
      const data = job.data as { link?: { id?: unknown }; submissions?: Array<{ submission?: unknown }> };
      const uids = (Array.isArray(data.submissions) ? data.submissions : []).map((s) => s?.submission).filter((u): u is string => typeof u === 'string');
      if (typeof data.link?.id === 'number' && uids.length) await failJob(ctx.redis, ctx.config.queuePrefix, data.link.id, uids);
    },
    close: async () => {
      await Promise.all([retention.stop(), purge.stop()]);
    },
  };
}
