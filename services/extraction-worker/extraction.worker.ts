import { type Job, UnrecoverableError } from 'bullmq';
import { pgTimestampToMillis } from '../../shared/calendar/dates';
import { EXTRACTION_RECORDS, startRetention } from '../../shared/db/retention';
import { uidFromPublicId } from '../../shared/ids/ids';
import type { Logger } from '../../shared/logging/logger';
import { type ExtractionJob, extractionJob, publishExtractionFinished } from '../../shared/queues/extraction.job';
import type { JobMeta } from '../../shared/queues/queues';
import type { WorkerContext, WorkerDefinition } from '../../shared/queues/worker';
import { type Outcome, findExtraction, finishExtraction } from './extractions.repository';
import { ExtractionFailure, type Extractor } from './extractor/extractor';
import { extractorFor } from './extractor/fallback-extractor';
import { RulesPool } from './extractor/rules-pool';

export type ExtractionDeps = Pick<WorkerContext, 'db' | 'redis' | 'config'>;

interface ExtractionOutcome {
  status: 'completed' | 'failed';
  /** True when the extraction was finished already (a duplicate delivery): nothing was written. */
  skipped: boolean;
}

const UNREADABLE = 'The text could not be read.';

/** Runs the extractor; what it cannot read becomes a failed extraction with the reason. */
async function outcomeOf(extractor: Extractor, input: Parameters<Extractor['extract']>[0], log: Logger): Promise<Outcome> {
  try {
    return { status: 'completed', result: await extractor.extract(input) };
  } catch (err) {
    if (err instanceof ExtractionFailure) return { status: 'failed', error: err.message };
    // A bug in the extractor will not go away on a retry: record it, keep the details in the log.
    log.error({ err }, 'the extractor threw');
    return { status: 'failed', error: UNREADABLE };
  }
}

/**
 * One extraction job: read the pending row, extract, finish the row, announce it. Safe to
 * run twice: a finished extraction is left as it is.
 */
export async function processExtraction(deps: ExtractionDeps, extractor: Extractor, data: unknown, log: Logger): Promise<ExtractionOutcome> {
  const { value, error } = extractionJob.schema.validate(data);
  if (error) throw new UnrecoverableError(`invalid extraction job: ${error.message}`);
  const publicId = value.extractionId;
  const row = await findExtraction(deps.db, uidFromPublicId('ext_', publicId) as string);
  // The gateway deletes the row when it could not queue the job; a job that got through
  // anyway has nothing left to do.
  if (!row) throw new UnrecoverableError(`extraction ${publicId} does not exist`);
  if (row.status !== 'pending') {
    log.info({ extraction: publicId, status: row.status }, 'extraction already finished; nothing to do');
    return { status: row.status, skipped: true };
  }

  const cpuBefore = process.cpuUsage();
  const outcome = await outcomeOf(
    extractor,
    { text: row.text, timezone: row.timezone, referenceDate: new Date(pgTimestampToMillis(row.reference_date)) },
    log,
  );
  // The whole process's CPU (the extractor's threads too): per job while jobs run one at a time.
  const cpu = process.cpuUsage(cpuBefore);
  const written = await finishExtraction(deps.db, row.id, outcome);
  const reason = outcome.status === 'failed' ? { error: outcome.error } : {};
  log.info({ extraction: publicId, status: outcome.status, ...reason, cpuMs: Math.round((cpu.user + cpu.system) / 1000), written }, 'extraction finished');
  if (written) await publishExtractionFinished(deps.redis, deps.config.queuePrefix, publicId, log);
  return { status: outcome.status, skipped: !written };
}

// The work is CPU-bound and short; a few at a time overlap the Postgres round trips.
const CONCURRENCY = 4;

/**
 * The extraction worker. The rules run in a pool of threads, one per job at once, each text
 * under EXTRACT_TIMEOUT_MS (the model, when configured, is asked first, from this thread; its
 * fallback is the pool). The pool has loaded and warmed up every thread when this resolves.
 * A test may pass its own extractor instead.
 */
export async function extractionWorker(ctx: WorkerContext, extractor?: Extractor): Promise<WorkerDefinition<ExtractionJob, ExtractionOutcome>> {
  const pool = extractor ? null : new RulesPool({ threads: CONCURRENCY, timeoutMs: ctx.config.extractTimeoutMs, logger: ctx.logger });
  try {
    await pool?.warmUp();
  } catch (err) {
    await pool?.close();
    throw err;
  }
  const used = extractor ?? extractorFor(ctx.config.extractLlm, pool as RulesPool, ctx.logger);
  const retention = startRetention(ctx, EXTRACTION_RECORDS, ctx.config.extractionRetentionDays);
  return {
    contract: extractionJob,
    concurrency: CONCURRENCY,
    close: async () => {
      await retention.stop();
      await pool?.close();
      if (pool) ctx.logger.info('extraction threads stopped');
    },
    process: async (job: Job<ExtractionJob & { meta?: JobMeta }>, workerCtx, log) => {
      try {
        return await processExtraction(workerCtx, used, job.data, log);
      } catch (err) {
        if (!(err instanceof UnrecoverableError) && job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
          await markFailedAfterRetries(workerCtx, job.data, log);
        }
        throw err;
      }
    },
  };
}

/** The last attempt failed (Postgres kept failing): leave a failed row, not a pending one forever. */
async function markFailedAfterRetries(ctx: ExtractionDeps, data: ExtractionJob, log: Logger): Promise<void> {
  try {
    const row = await findExtraction(ctx.db, uidFromPublicId('ext_', data.extractionId) ?? '');
    if (row && (await finishExtraction(ctx.db, row.id, { status: 'failed', error: 'The extraction could not be completed; please try again.' }))) {
      await publishExtractionFinished(ctx.redis, ctx.config.queuePrefix, data.extractionId, log);
    }
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'could not record the failed extraction');
  }
}
