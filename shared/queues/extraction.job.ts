import Joi from 'joi';
import type { Logger } from '../logging/logger';
import { defineJob, jobMetaSchema, QUEUES, RETRY_THROUGH_OUTAGES } from './queues';
import type { Redis } from './redis';

/**
 * The extractions queue: the gateway has stored a pending extraction and asks the
 * extraction worker to read it. The job names the row only; the text stays in Postgres,
 * the source of truth, so a retried job reads exactly what was asked.
 */
export interface ExtractionJob {
  /** The extraction's public id (`ext_…`), also the job id: a second add is a no-op. */
  extractionId: string;
}

export const extractionJob = defineJob<ExtractionJob>({
  queue: QUEUES.extractions,
  schema: Joi.object({
    extractionId: Joi.string().pattern(/^ext_[0-9A-Za-z]{16}$/).required(),
    meta: jobMetaSchema,
  }),
  // Retries are for Postgres outages, for as long as they last: the row is pending until a
  // worker can write it (three quick tries left it pending for good after a few seconds of
  // outage). A text that cannot be read is recorded as failed at once, never retried.
  defaults: RETRY_THROUGH_OUTAGES,
});

/** Published with the extraction's public id once it is completed or failed. */
export const extractionFinishedChannel = (queuePrefix: string) => `${queuePrefix}:extractions:finished`;

/**
 * Tells waiting requests (`?wait=N`) that an extraction is done. Best effort: a lost message
 * only means a waiting request answers 202 and the client reads the result with a GET.
 */
export async function publishExtractionFinished(redis: Redis, queuePrefix: string, publicId: string, logger: Logger): Promise<void> {
  try {
    await redis.publish(extractionFinishedChannel(queuePrefix), publicId);
  } catch (err) {
    logger.warn({ err: (err as Error).message, extraction: publicId }, 'could not announce a finished extraction');
  }
}
