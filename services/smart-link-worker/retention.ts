import type { Knex } from '../../shared/db/knex';
import type { Clock } from '../../shared/lifecycle/clock';
import type { Logger } from '../../shared/logging/logger';

/** Rows per statement: short transactions, no long hold on the table. */
const BATCH = 5000;
/** The advisory lock that lets one smart-link worker at a time prune ("slpr"). */
const PRUNE_LOCK = 0x736c7072;
const DAY_MS = 86_400_000;

/**
 * Deletes the submission records received before `before`, a batch per transaction, each
 * under the pruning lock: when another worker holds it, that one is pruning and this one
 * stops. The events the submissions made stay. Answers how many records were deleted.
 */
export async function pruneSubmissions(db: Knex, before: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db.transaction(async (trx) => {
      const { rows } = await trx.raw('SELECT pg_try_advisory_xact_lock(?) AS locked', [PRUNE_LOCK]);
      if (!rows[0].locked) return null;
      const result = await trx.raw('DELETE FROM smart_link_submissions WHERE id IN (SELECT id FROM smart_link_submissions WHERE received_at < ? LIMIT ?)', [before, BATCH]);
      return result.rowCount as number;
    });
    if (deleted === null) return total;
    total += deleted;
    if (deleted < BATCH) return total;
  }
}

export interface Retention {
  /** Stops the schedule and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * SUBMISSION_RETENTION_DAYS at work: a first run soon after the worker starts, then one
 * an hour (0 days: records are kept for ever and nothing runs). A failed run (Postgres
 * away) is logged and tried again at the next hour.
 */
export function startRetention(
  ctx: { db: Knex; clock: Clock; logger: Logger; config: { submissionRetentionDays: number } },
  timing: { firstAfterMs: number; everyMs: number } = { firstAfterMs: 60_000, everyMs: 3_600_000 },
): Retention {
  const days = ctx.config.submissionRetentionDays;
  if (days === 0) return { stop: async () => undefined };
  let running: Promise<void> | null = null;
  const run = () => {
    running ??= pruneSubmissions(ctx.db, new Date(ctx.clock.now().getTime() - days * DAY_MS))
      .then((deleted) => {
        if (deleted) ctx.logger.info({ deleted, olderThanDays: days }, 'old submission records deleted');
      })
      .catch((err: unknown) => ctx.logger.warn({ err: (err as Error).message }, 'could not delete old submission records; trying again later'))
      .finally(() => {
        running = null;
      });
  };
  const first = setTimeout(run, timing.firstAfterMs);
  const every = setInterval(run, timing.everyMs);
  first.unref();
  every.unref();
  return {
    async stop() {
      clearTimeout(first);
      clearInterval(every);
      await running;
    },
  };
}
