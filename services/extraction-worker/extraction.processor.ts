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
import { extractWithRules } from './extractor/rules-extractor';

export type ExtractionDeps = Pick<WorkerContext, 'db' | 'redis' | 'config'>;

export interface ExtractionOutcome {
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
  const cpu = process.cpuUsage(cpuBefore);
  const written = await finishExtraction(deps.db, row.id, outcome);
  log.info({ extraction: publicId, status: outcome.status, cpuMs: Math.round((cpu.user + cpu.system) / 1000), written }, 'extraction finished');
  if (written) await publishExtractionFinished(deps.redis, deps.config.queuePrefix, publicId, log);
  return { status: outcome.status, skipped: !written };
}

// A long text the first time compiles chrono's and the rules' regular expressions; doing it
// at start keeps that one-off cost out of the first user's job.
const WARM_UP_TEXT = `${'Agenda and notes for the quarter, shared with the whole team. '.repeat(60)}Lunch tomorrow at 1pm at Cafe Luna for 90 minutes`;

export function extractionWorker(ctx: WorkerContext, extractor: Extractor = extractorFor(ctx.config.extractLlm, ctx.logger)): WorkerDefinition<ExtractionJob, ExtractionOutcome> {
  try {
    extractWithRules({ text: WARM_UP_TEXT, timezone: 'UTC', referenceDate: new Date() });
  } catch (err) {
    ctx.logger.warn({ err: (err as Error).message }, 'extractor warm-up failed');
  }
  const retention = startRetention(ctx, EXTRACTION_RECORDS, ctx.config.extractionRetentionDays);
  return {
    contract: extractionJob,
    // The work is CPU-bound and short; a few at a time overlap the Postgres round trips.
    concurrency: 4,
    close: () => retention.stop(),
    process: async (job: Job<ExtractionJob & { meta?: JobMeta }>, workerCtx, log) => {
      try {
        return await processExtraction(workerCtx, extractor, job.data, log);
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
