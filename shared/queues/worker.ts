import { DelayedError, type Job, type Processor, UnrecoverableError, Worker, type WorkerOptions } from 'bullmq';
import { type DeploymentId, deploymentOf } from '../db/deployment';
import { isDbUnavailableError } from '../db/knex';
import type { Config } from '../config/config';
import type { Knex } from '../db/knex';
import type { Clock } from '../lifecycle/clock';
import type { Logger } from '../logging/logger';
import { cappedBackoff, type JobContract, type JobMeta } from './queues';
import { type Redis, refusesWrites } from './redis';
import type { Metrics } from '../metrics/metrics';
import { jobMetrics } from '../metrics/job-metrics';

/** How long a job of another database is left for that database's workers before it fails. */
const FOREIGN_JOB_MAX_AGE_MS = 24 * 3600_000;

/**
 * Jobs queued by another database: two deployments (staging beside production) given one
 * Redis and one QUEUE_PREFIX, or a database recreated while its old jobs wait. Their row
 * ids mean nothing here, so such a job is not run but left, delayed, for a worker of its own
 * database (it has about half a chance each time while both deployments run), without
 * spending an attempt; the delay grows by a quarter second each time, up to ten. One whose
 * database has had no worker take it for FOREIGN_JOB_MAX_AGE_MS fails with that reason
 * (kept in the failed set, to retry once a worker of its own runs).
 */
class ForeignJobs {
  private lastWarnMs = 0;

  constructor(
    private readonly own: DeploymentId,
    private readonly logger: Logger,
  ) {}

  /** Throws what Postgres throws while it is away (the job then waits like any other). */
  async isForeign(deployment: string): Promise<boolean> {
    return deployment !== (await this.own.get());
  }

  async leave(job: Job, deployment: string, token: string, log: Logger): Promise<void> {
    if (Date.now() - job.timestamp > FOREIGN_JOB_MAX_AGE_MS) {
      throw new UnrecoverableError(`queued by another database (deployment ${deployment}), whose workers did not take it within a day; QUEUE_PREFIX must differ per deployment`);
    }
    // Short while the other deployment runs (it takes the job at its next turn, each worker
    // about as likely as the other), longer as the job keeps coming back here.
    const times = Math.max(1, job.attemptsStarted ?? 1);
    const delayMs = Math.min(10_000, 250 * times) * (0.5 + Math.random());
    if (Date.now() - this.lastWarnMs > 60_000) {
      this.lastWarnMs = Date.now();
      this.logger.error(
        { queue: job.queueName, jobId: job.id, deployment, own: this.own.peek() },
        'a job of another database is in this queue: QUEUE_PREFIX is shared by two deployments on one Redis; it is left for its own workers',
      );
    }
    log.debug({ deployment, delayMs }, 'job of another database left for its own workers');
    await job.moveToDelayed(Date.now() + delayMs, token);
  }
}

/**
 * One line for the first of a run of errors, then at most one a minute with how many came
 * meanwhile: a worker that meets the same failure at every turn (Redis full) must not write
 * a line for each.
 */
class ThrottledLog {
  private lastMs = 0;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly msg: string,
    private readonly everyMs = 60_000,
  ) {}

  log(err: Error): void {
    const now = Date.now();
    if (now - this.lastMs < this.everyMs) {
      this.suppressed++;
      return;
    }
    this.logger.warn({ err: err.message.slice(0, 300), suppressed: this.suppressed }, this.msg);
    this.lastMs = now;
    this.suppressed = 0;
  }
}

/**
 * While Redis answers but refuses writes (full at its maxmemory, see refusesWrites), BullMQ's
 * loop fails at once and tries again at once, thousands of times a second. Each such error
 * pauses taking jobs (the jobs in hand go on) for a while that doubles from a second to 30,
 * then tries again; a job completed resets it. The worker recovers by itself once Redis has
 * room, and its /readyz says 503 meanwhile (not running).
 */
class RefusalBackoff {
  private delayMs = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly worker: Worker,
    private readonly logger: Logger,
  ) {
    worker.on('closing', () => {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
    });
  }

  onError(err: Error): void {
    if (!refusesWrites(err) || this.timer || this.worker.closing) return;
    this.delayMs = Math.min(30_000, Math.max(1000, this.delayMs * 2));
    const delayMs = this.delayMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.worker.closing) this.worker.resume();
    }, delayMs);
    this.worker.pause(true).catch(() => undefined);
    this.logger.warn({ delayMs }, 'Redis refuses writes; taking no jobs for a while');
  }

  onProgress(): void {
    this.delayMs = 0;
  }
}

const secondsSince = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;

/** What a job processor gets besides the job. */
export interface WorkerContext {
  config: Config;
  db: Knex;
  logger: Logger;
  clock: Clock;
  /** A request-path style connection (no offline queue) for publishing and side lookups. */
  redis: Redis;
  /** The process's metrics (job figures here; processors add their own). */
  metrics: Metrics;
}

export interface WorkerDefinition<T, R> {
  contract: JobContract<T>;
  concurrency: number;
  /** Processes one job; throw UnrecoverableError for payloads that can never succeed. */
  process: (job: Job<T & { meta?: JobMeta }>, ctx: WorkerContext, log: Logger) => Promise<R>;
  /** BullMQ options of this worker; the stall policy and the `capped` backoff are createWorker's (see STALL_POLICY). */
  options?: Partial<Omit<WorkerOptions, 'maxStalledCount'>>;
  /**
   * Called once a job is failed for good (its last attempt, or a reason of its own such as a
   * payload that breaks the contract, whose data is then not to be trusted); its errors are
   * logged, never thrown.
   */
  givenUp?: (job: Job, log: Logger) => Promise<void>;
  /** Releases what the definition opened (an SMTP pool…); called after the worker has closed. */
  close?: () => Promise<void> | void;
}

/**
 * A job whose worker died (a crash, an OOM kill, a liveness probe restarting a busy process)
 * is stalled, not failed: BullMQ's default fails it on its second stall ("job stalled more
 * than allowable limit"), and a crash loop then turned accepted work into failed work that
 * never ran again. Here a stall is never a failure, however often it repeats: the job runs
 * again until it is done, or ends with a reason of its own (a bad payload, an event limit, a
 * CPU budget). That is safe because no job can kill its process: every processor is
 * idempotent and bounded (payload sizes are capped, extraction runs in a thread with a CPU
 * budget).
 */
const STALL_POLICY = { maxStalledCount: Number.MAX_SAFE_INTEGER } satisfies Partial<WorkerOptions>;

/**
 * A BullMQ worker for one queue, with the payload checked against its contract and every
 * log line carrying the job id and the request id that queued it. Tests run it in-process;
 * worker processes run it through runWorkerProcess.
 */
export function createWorker<T, R>(def: WorkerDefinition<T, R>, ctx: WorkerContext, connection: Redis): Worker<T, R> {
  const figures = jobMetrics(ctx.metrics, def.contract.queue);
  const foreign = new ForeignJobs(deploymentOf(ctx.db), ctx.logger);
  const processor: Processor<T, R> = async (job, token) => {
    const meta = (job.data as { meta?: JobMeta }).meta;
    const log = ctx.logger.child({ queue: def.contract.queue, jobId: job.id, reqId: meta?.requestId, attempt: job.attemptsMade + 1 });
    const started = process.hrtime.bigint();
    try {
      if (token && meta?.deployment && (await foreign.isForeign(meta.deployment))) {
        await foreign.leave(job, meta.deployment, token, log);
        throw new DelayedError();
      }
      // A payload that breaks its contract will never succeed: fail it at once, no retries.
      // Fields this worker does not know are let through (producers check strictly): a
      // newer gateway's jobs, queued during a rollout, run on the fields this release knows.
      const { error } = def.contract.schema.validate(job.data, { allowUnknown: true });
      if (error) throw new UnrecoverableError(`invalid ${def.contract.queue} payload: ${error.message}`);
      const result = await def.process(job as Job<T & { meta?: JobMeta }>, ctx, log);
      figures.completed(secondsSince(started));
      return result;
    } catch (err) {
      if (err instanceof DelayedError) throw err;
      if (token && isDbUnavailableError(err)) {
        // Postgres is away: nothing this job does can succeed until it is back. The job waits
        // (delayed, its own backoff up to a minute) without spending one of its attempts, so
        // an outage of any length never turns queued work into failed work; attempts are for
        // failures of the job itself (an SMTP refusal, a bug).
        const waited = Math.max(0, (job.attemptsStarted ?? 1) - 1 - job.attemptsMade);
        const delayMs = cappedBackoff(waited + 1);
        figures.failed(secondsSince(started), true);
        log.warn({ err: (err as Error).message, delayMs }, 'Postgres is unavailable; the job waits');
        await job.moveToDelayed(Date.now() + delayMs, token);
        throw new DelayedError();
      }
      const willRetry = !(err instanceof UnrecoverableError) && job.attemptsMade + 1 < (job.opts.attempts ?? 1);
      figures.failed(secondsSince(started), willRetry);
      if (!willRetry && def.givenUp) await def.givenUp(job, log).catch((e: unknown) => log.warn({ err: (e as Error).message?.slice(0, 200) }, 'could not finish a job given up on'));
      throw err;
    }
  };
  const worker = new Worker<T, R>(def.contract.queue, processor, {
    connection,
    prefix: ctx.config.queuePrefix,
    concurrency: def.concurrency,
    // A crashed worker's jobs are found (stalled) and run again after about one lock period.
    lockDuration: ctx.config.workerLockMs,
    stalledInterval: ctx.config.workerLockMs,
    ...def.options,
    // After the definition's options, so no worker can opt out: see STALL_POLICY.
    ...STALL_POLICY,
    settings: { ...def.options?.settings, backoffStrategy: cappedBackoff },
  });
  worker.on('failed', (job, err) => {
    const meta = (job?.data as { meta?: JobMeta } | undefined)?.meta;
    ctx.logger.warn(
      { queue: def.contract.queue, jobId: job?.id, reqId: meta?.requestId, attempts: job?.attemptsMade, err: err.message },
      job && err.name !== 'UnrecoverableError' && job.attemptsMade < (job.opts.attempts ?? 1) ? 'job failed; will retry' : 'job failed for good',
    );
  });
  worker.on('stalled', (jobId) => ctx.logger.warn({ queue: def.contract.queue, jobId }, 'job stalled (its worker stopped); it runs again'));
  const errors = new ThrottledLog(ctx.logger.child({ queue: def.contract.queue }), 'worker error');
  const backoff = new RefusalBackoff(worker, ctx.logger.child({ queue: def.contract.queue }));
  worker.on('error', (err) => {
    errors.log(err);
    backoff.onError(err);
  });
  worker.on('completed', () => backoff.onProgress());
  return worker;
}
