import type { Knex } from 'knex';
import { unbounded } from './unbounded';

/**
 * The webhook outbox's due index, by webhook. The relay took the outbox's oldest due
 * deliveries first, through an index on the next attempt's time alone: behind one webhook
 * with thousands due and at its limit of deliveries in flight (a slow endpoint), every scan
 * found only deliveries it could not take, and every other team's webhooks waited (a test
 * endpoint holding 3,000 deliveries kept another team's one from going for minutes). Now it
 * takes each webhook's oldest due from this index, a webhook at a time.
 *
 * Only for deliveries with a next attempt's time (every pending one has it): a statement
 * that does not ask for due deliveries by that time cannot take this index for another's.
 * When the statistics still said next to nothing was pending (right after a burst), the
 * planner took the old due index for the lookups of a resource's earlier and next messages
 * too, walking all of it once per delivery of a job (500,000 rows read for a job of 50).
 *
 * Built CONCURRENTLY, outside a transaction: deliveries can still be written meanwhile.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await unbounded(knex, [
    'DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_due_by_webhook',
    "CREATE INDEX CONCURRENTLY webhook_deliveries_due_by_webhook ON webhook_deliveries (webhook_id, next_attempt_at, id) WHERE status = 'pending' AND next_attempt_at IS NOT NULL",
    'DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_due',
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await unbounded(knex, [
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'",
    'DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_due_by_webhook',
  ]);
}
