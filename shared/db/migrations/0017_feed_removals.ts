import type { Knex } from 'knex';

/**
 * A calendar feed's Last-Modified must move when an event leaves it (deleted, rejected, made
 * a draft or protected), not only when one in it changes. This partial index finds the
 * latest such change per calendar; published events, the bulk of every insert, never enter it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX events_off_feed_changes ON events (calendar_id, updated_at) WHERE deleted_at IS NOT NULL OR status <> 'approved' OR is_draft OR access_code_hash IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX events_off_feed_changes');
}
