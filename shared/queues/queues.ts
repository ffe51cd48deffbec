import { type JobsOptions, Queue } from 'bullmq';
import Joi from 'joi';
import type { DeploymentId } from '../db/deployment';
import { unavailable } from '../errors/app-error';
import type { Logger } from '../logging/logger';
import type { PayloadSchema } from './json-schema';
import { isRedisUnavailableError, mayHaveRun, type Redis, requireReady } from './redis';

/**
 * The queues between the gateway and the workers. Names, payload types and their schemas
 * live here once, used by producer and consumer alike.
 */
export const QUEUES = {
  smartLinkSubmissions: 'smart-link-submissions',
  extractions: 'extractions',
  emails: 'emails',
  webhooks: 'webhooks',
  inboundReplies: 'inbound-replies',
  accountEmails: 'account-emails',
  reminders: 'reminders',
} as const;

type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** Carried by every job, so one request can be followed from the gateway into the worker. */
export interface JobMeta {
  requestId?: string;
  /** The database the job belongs to (its deployment id): stamped by Producer, checked by createWorker. */
  deployment?: string;
}

/** The longest each JobMeta field may be, in characters (both forms of its schema below). */
const META_CHARS = { requestId: 200, deployment: 64 } as const;
export const jobMetaSchema = Joi.object({ requestId: Joi.string().max(META_CHARS.requestId), deployment: Joi.string().max(META_CHARS.deployment) });
/** The same, for contracts written in JSON Schema (json-schema.ts). */
export const jobMetaJsonSchema = {
  type: 'object',
  properties: {
    requestId: { type: 'string', minLength: 1, maxLength: META_CHARS.requestId },
    deployment: { type: 'string', minLength: 1, maxLength: META_CHARS.deployment },
  },
  additionalProperties: false,
} as const;

/** A queue's contract: its name, the payload's schema (joi, or compiled JSON Schema for hot queues), and the defaults its jobs get. */
export interface JobContract<T> {
  queue: QueueName;
  schema: PayloadSchema<T>;
  defaults: JobsOptions;
}

export const defineJob = <T>(contract: JobContract<T>): JobContract<T> => contract;

/** Kept long enough to answer "did this run?", short enough that Redis stays small. */
const RETENTION: Pick<JobsOptions, 'removeOnComplete' | 'removeOnFail'> = {
  removeOnComplete: { age: 24 * 3600, count: 100_000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 100_000 },
};

/**
 * For jobs whose only failures are outages (Postgres away): retry for hours, 1 s doubling
 * to a 60 s ceiling, so an outage delays accepted work but never drops it. createWorker
 * registers the `capped` strategy on every worker.
 */
export const RETRY_THROUGH_OUTAGES: Pick<JobsOptions, 'attempts' | 'backoff'> = { attempts: 1000, backoff: { type: 'capped' } };

/** Backoff for the `capped` type: 1 s doubling to a 60 s ceiling. */
export const cappedBackoff = (attemptsMade: number) => Math.min(60_000, 1000 * 2 ** Math.max(0, attemptsMade - 1));


/**
 * How long an add whose outcome is unknown (Redis's reply was lost) is tried again before it
 * is answered 503.
 */
const UNSURE_RETRY_MS = 4000;

/**
 * Puts jobs on one queue from a request path. The connection has no offline queue, so
 * while Redis is away an add fails at once and becomes a 503 (never an accepted request
 * that was not stored).
 */
export class Producer<T extends object> {
  readonly queue: Queue;

  constructor(
    private readonly contract: JobContract<T>,
    /** The request path's connection (shared by the producer's helpers: see teamTurns). */
    readonly connection: Redis,
    prefix: string,
    private readonly logger: Logger,
    /** Stamped on every job (meta.deployment) once known, so no other database's worker runs it. */
    private readonly deployment?: DeploymentId,
  ) {
    this.queue = new Queue(contract.queue, { connection, prefix, defaultJobOptions: { ...RETENTION, ...contract.defaults } });
    this.queue.on('error', (err) => logger.debug({ err: err.message, queue: contract.queue }, 'queue connection error'));
  }

  /** The job as stored: the payload with this database's deployment id in its meta. */
  stamped<D extends { meta?: JobMeta }>(data: D): D {
    const deployment = this.deployment?.peek();
    return deployment ? { ...data, meta: { ...data.meta, deployment } } : data;
  }

  /** Stores the job in Redis (or throws a 503 AppError). Payloads are checked first. */
  async add(name: string, payload: T & { meta?: JobMeta }, opts: JobsOptions = {}): Promise<string> {
    const [id] = await this.addBulk([{ name, data: payload, opts }]);
    return id;
  }

  /**
   * Stores many jobs in one round trip (a fan-out of hundreds of messages, a gateway's turn
   * of smart-link submissions), all or none, each payload checked against the contract
   * first. While Redis is away: a 503 AppError, having stored nothing. When Redis's reply is
   * lost (the jobs may or may not be stored) and every job names its id, the same jobs are
   * sent again under those ids until one answer comes or UNSURE_RETRY_MS pass: a second add
   * of a stored job is a no-op, so the jobs are then stored exactly once.
   */
  async addBulk(payloads: Array<{ name: string; data: T & { meta?: JobMeta }; opts?: JobsOptions }>): Promise<string[]> {
    const jobs = payloads.map((job) => ({ ...job, data: this.stamped(job.data) }));
    for (const job of jobs) {
      const { error } = this.contract.schema.validate(job.data);
      if (error) throw new Error(`invalid ${this.contract.queue} payload: ${error.message}`);
    }
    if (!jobs.length) return [];
    requireReady(this.connection);
    const named = jobs.every((job) => job.opts?.jobId !== undefined);
    const deadline = Date.now() + UNSURE_RETRY_MS;
    let unsure = false;
    for (let attempt = 1; ; attempt++) {
      try {
        const added = await this.queue.addBulk(jobs);
        if (unsure) this.logger.info({ queue: this.contract.queue, jobs: jobs.length, attempt }, 'queued jobs on a retry after a lost reply');
        return added.map((job) => job.id as string);
      } catch (err) {
        unsure ||= named && mayHaveRun(err);
        if (!unsure || Date.now() >= deadline) {
          if (!isRedisUnavailableError(err)) throw err;
          // The error's message only: a failed command's text would carry every payload.
          this.logger.warn({ err: (err as Error).message?.slice(0, 200), queue: this.contract.queue, jobs: jobs.length }, 'could not queue jobs: Redis unavailable');
          throw unavailable();
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(500, 50 * 2 ** attempt)));
      }
    }
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
