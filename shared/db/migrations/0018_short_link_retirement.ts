import type { Knex } from 'knex';

/**
 * A short link that an event or calendar gives up (renamed, removed, or its owner deleted) is
 * retired instead of freed: `/l/{slug}` keeps leading to its owner while the owner is public,
 * and only the owner's team may claim the slug again (owners are soft-deleted, so the team is
 * always known through them). Printed and shared links never start pointing at another
 * team's page. At most one live (not retired) slug per event or calendar.
 *
 * Gateways of the previous release keep working against this schema during a rollout: they
 * insert live rows and delete (free) the ones they give up, both still valid here.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE short_links ADD COLUMN retired_at timestamptz');
  await knex.raw('DROP INDEX short_links_event');
  await knex.raw('DROP INDEX short_links_calendar');
  await knex.raw('CREATE UNIQUE INDEX short_links_event ON short_links (event_id) WHERE event_id IS NOT NULL AND retired_at IS NULL');
  await knex.raw('CREATE UNIQUE INDEX short_links_calendar ON short_links (calendar_id) WHERE calendar_id IS NOT NULL AND retired_at IS NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DELETE FROM short_links WHERE retired_at IS NOT NULL');
  await knex.raw('DROP INDEX short_links_event');
  await knex.raw('DROP INDEX short_links_calendar');
  await knex.raw('CREATE UNIQUE INDEX short_links_event ON short_links (event_id) WHERE event_id IS NOT NULL');
  await knex.raw('CREATE UNIQUE INDEX short_links_calendar ON short_links (calendar_id) WHERE calendar_id IS NOT NULL');
  await knex.raw('ALTER TABLE short_links DROP COLUMN retired_at');
}
