import type { Knex } from './knex';
import type { Clock } from '../lifecycle/clock';
import type { Logger } from '../logging/logger';

/** Rows per statement: short transactions, no long hold on the table. */
const BATCH = 5000;
const DAY_MS = 86_400_000;

/** Records a worker deletes once they are older than their retention. */
interface RetentionTarget {
  /** For the log line: "old submission records deleted". */
  what: string;
  table: string;
  /** The record's time, with an index that finds old rows (a BRIN index suits append-only tables). */
  column: string;
  /**
   * Only rows that are done with, e.g. `status <> 'pending'` (code, never input); `:cutoff`
   * stands for the cutoff instant.
   */
  onlyWhere?: string;
  /** An advisory lock of its own: one worker at a time prunes this table. */
  lockKey: number;
}

export const SUBMISSION_RECORDS: RetentionTarget = { what: 'submission records', table: 'smart_link_submissions', column: 'received_at', lockKey: 0x736c7072 };
/**
 * Email delivery records (one per message: its kind, SEQUENCE, status, the server's reply)
 * once the event is over: deleted, or a one-off event that ended, before the cutoff. A
 * repeating event's records stay while it is not deleted (its later dates may still be
 * ahead), and so does any message still being sent.
 */
export const DELIVERY_RECORDS: RetentionTarget = {
  what: 'email delivery records',
  table: 'deliveries',
  column: 'created_at',
  onlyWhere: `status <> 'queued' AND event_id IN (
    SELECT id FROM events WHERE deleted_at < :cutoff OR (recurrence_rule IS NULL AND ends_at < :cutoff))`,
  lockKey: 0x646c7672,
};

/** Webhook messages with their deliveries and attempts (deleted with them), once none is pending. */
export const WEBHOOK_RECORDS: RetentionTarget = {
  what: 'webhook deliveries',
  table: 'webhook_messages',
  column: 'created_at',
  onlyWhere: "NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.message_id = webhook_messages.id AND d.status = 'pending')",
  lockKey: 0x77686b72,
};

export const EXTRACTION_RECORDS: RetentionTarget = {
  what: 'extractions',
  table: 'extractions',
  column: 'created_at',
  // A pending one is still someone's open request (and its job may still run).
  onlyWhere: "status <> 'pending'",
  lockKey: 0x65787072,
};

/**
 * Deletes the target's rows older than `before`, a batch per transaction, each under the
 * target's lock: when another worker holds it, that one is pruning and this one stops.
 * Answers how many rows were deleted.
 */
export async function pruneOlderThan(db: Knex, target: RetentionTarget, before: Date): Promise<number> {
  const only = target.onlyWhere ? `AND ${target.onlyWhere.replaceAll(':cutoff', '?::timestamptz')}` : '';
  const cutoffs = (target.onlyWhere?.match(/:cutoff/g) ?? []).map(() => before);
  let total = 0;
  for (;;) {
    const deleted = await db.transaction(async (trx) => {
      const { rows } = await trx.raw('SELECT pg_try_advisory_xact_lock(?) AS locked', [target.lockKey]);
      if (!rows[0].locked) return null;
      const result = await trx.raw(`DELETE FROM ?? WHERE id IN (SELECT id FROM ?? WHERE ?? < ? ${only} LIMIT ?)`, [target.table, target.table, target.column, before, ...cutoffs, BATCH]);
      return result.rowCount as number;
    });
    if (deleted === null) return total;
    total += deleted;
    if (deleted < BATCH) return total;
  }
}

interface Retention {
  /** False when the setting is 0: nothing is scheduled, rows are kept. */
  readonly scheduled: boolean;
  /** Stops the schedule and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * Runs `task` soon after the worker starts, then once every `everyMs`, never two at once;
 * a failed run (Postgres away) is logged as `could not …` and tried again at the next turn.
 */
export function startSweep(
  ctx: { logger: Logger },
  task: { what: string; run: () => Promise<void> },
  timing: { firstAfterMs: number; everyMs: number },
): Retention {
  let running: Promise<void> | null = null;
  const run = () => {
    running ??= task
      .run()
      .catch((err: unknown) => ctx.logger.warn({ err: (err as Error).message }, `could not ${task.what}; trying again later`))
      .finally(() => {
        running = null;
      });
  };
  const first = setTimeout(run, timing.firstAfterMs);
  const every = setInterval(run, timing.everyMs);
  first.unref();
  every.unref();
  return {
    scheduled: true,
    async stop() {
      clearTimeout(first);
      clearInterval(every);
      await running;
    },
  };
}

/**
 * A retention setting at work: a first run soon after the worker starts, then one an hour
 * (0 days: rows are kept for ever and nothing runs).
 */
export function startRetention(
  ctx: { db: Knex; clock: Clock; logger: Logger },
  target: RetentionTarget,
  days: number,
  timing: { firstAfterMs: number; everyMs: number } = { firstAfterMs: 60_000, everyMs: 3_600_000 },
): Retention {
  if (days === 0) return { scheduled: false, stop: async () => undefined };
  const run = async () => {
    const deleted = await pruneOlderThan(ctx.db, target, new Date(ctx.clock.now().getTime() - days * DAY_MS));
    if (deleted) ctx.logger.info({ deleted, olderThanDays: days }, `old ${target.what} deleted`);
  };
  return startSweep(ctx, { what: `delete old ${target.what}`, run }, timing);
}
