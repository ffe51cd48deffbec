import type { Knex } from 'knex';
import { unbounded } from './unbounded';

/**
 * The webhook outbox's due index, narrowed to the statements it is for. It held the pending
 * deliveries, and so did the (webhook, resource, message) index; when the statistics still
 * said that next to nothing was pending (right after a burst of messages, before autovacuum
 * analyzes the table), the planner took the due index for the lookups of a resource's
 * earlier and next messages too, walking all of it once per delivery of a job (500,000
 * rows read for a job of 50, after a burst of 10,000). Its rows are the same (a pending
 * delivery always has its next attempt's time), but only a statement that asks for due
 * deliveries by that time (the relay's scan) can prove it may use it now.
 *
 * Built CONCURRENTLY, outside a transaction: deliveries can still be written meanwhile.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await unbounded(knex, [
    'DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_due_at',
    "CREATE INDEX CONCURRENTLY webhook_deliveries_due_at ON webhook_deliveries (next_attempt_at) WHERE status = 'pending' AND next_attempt_at IS NOT NULL",
    'DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_due',
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await unbounded(knex, [
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'",
    'DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_due_at',
  ]);
}
