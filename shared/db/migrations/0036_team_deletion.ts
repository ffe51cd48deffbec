import type { Knex } from 'knex';
import { unbounded } from './unbounded';

/**
 * A team's owner may delete it: `teams.deleted_at` says when (null: it is live), and from
 * then on nothing of it answers. A worker deletes its rows in batches once the grace period
 * has passed; the partial index finds the teams waiting for that.
 *
 * Deleting events is new (they were only ever marked deleted): Postgres checks each deleted
 * event's references, and without an index on the referencing column that check reads the
 * whole table once per event. Submissions and deliveries had no index that check can use
 * (the deliveries' ones are partial on `kind`), so a purge of a million events would read
 * those tables a million times; these two make each check an index probe. Built
 * CONCURRENTLY, outside a transaction, so that both tables stay writable meanwhile; a
 * build cut short leaves an invalid index, which the next run drops and builds again.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await unbounded(knex, [
    'ALTER TABLE teams ADD COLUMN IF NOT EXISTS deleted_at timestamptz',
    'CREATE INDEX IF NOT EXISTS teams_deleted ON teams (deleted_at) WHERE deleted_at IS NOT NULL',
    'DROP INDEX CONCURRENTLY IF EXISTS smart_link_submissions_event',
    'CREATE INDEX CONCURRENTLY smart_link_submissions_event ON smart_link_submissions (event_id) WHERE event_id IS NOT NULL',
    'DROP INDEX CONCURRENTLY IF EXISTS deliveries_event',
    'CREATE INDEX CONCURRENTLY deliveries_event ON deliveries (event_id)',
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await unbounded(knex, [
    'DROP INDEX CONCURRENTLY IF EXISTS deliveries_event',
    'DROP INDEX CONCURRENTLY IF EXISTS smart_link_submissions_event',
    'DROP INDEX IF EXISTS teams_deleted',
    'ALTER TABLE teams DROP COLUMN IF EXISTS deleted_at',
  ]);
}
