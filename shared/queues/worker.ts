import { DelayedError, type Job, type Processor, UnrecoverableError, Worker, type WorkerOptions } from 'bullmq';
import { isDbUnavailableError } from '../db/knex';
import type { Config } from '../config/config';
import type { Knex } from '../db/knex';
import type { Clock } from '../lifecycle/clock';
import type { Logger } from '../logging/logger';
import { cappedBackoff, type JobContract, type JobMeta } from './queues';
import type { Redis } from './redis';
import type { Metrics } from '../metrics/metrics';
import { jobMetrics } from '../metrics/job-metrics';

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
  options?: Partial<WorkerOptions>;
  /** Releases what the definition opened (an SMTP pool…); called after the worker has closed. */
  close?: () => Promise<void> | void;
}

/**
 * A BullMQ worker for one queue, with the payload checked against its contract and every
 * log line carrying the job id and the request id that queued it. Tests run it in-process;
 * worker processes run it through runWorkerProcess.
 */
export function createWorker<T, R>(def: WorkerDefinition<T, R>, ctx: WorkerContext, connection: Redis): Worker<T, R> {
  const figures = jobMetrics(ctx.metrics, def.contract.queue);
  const processor: Processor<T, R> = async (job, token) => {
    const meta = (job.data as { meta?: JobMeta }).meta;
    const log = ctx.logger.child({ queue: def.contract.queue, jobId: job.id, reqId: meta?.requestId, attempt: job.attemptsMade + 1 });
    const started = process.hrtime.bigint();
    try {
      // A payload that breaks its contract will never succeed: fail it at once, no retries.
      // Fields this worker does not know are let through (producers check strictly): a
      // newer gateway's jobs, queued during a rollout, run on the fields this release knows.
      const { error } = def.contract.schema.validate(job.data, { allowUnknown: true });
      if (error) throw new UnrecoverableError(`invalid ${def.contract.queue} payload: ${error.message}`);
      const result = await def.process(job as Job<T & { meta?: JobMeta }>, ctx, log);
      figures.completed(secondsSince(started));
      return result;
    } catch (err) {
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
  });
  worker.on('failed', (job, err) => {
    const meta = (job?.data as { meta?: JobMeta } | undefined)?.meta;
    ctx.logger.warn(
      { queue: def.contract.queue, jobId: job?.id, reqId: meta?.requestId, attempts: job?.attemptsMade, err: err.message },
      job && err.name !== 'UnrecoverableError' && job.attemptsMade < (job.opts.attempts ?? 1) ? 'job failed; will retry' : 'job failed for good',
    );
  });
  worker.on('error', (err) => ctx.logger.warn({ queue: def.contract.queue, err: err.message }, 'worker error'));
  return worker;
}
