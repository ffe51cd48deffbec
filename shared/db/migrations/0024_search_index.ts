import type { Knex } from 'knex';
import { unbounded } from './unbounded';

/**
 * `search` (the title or internal name contains a term, a page in date order) read every
 * match through the trigram GIN indexes and sorted them, or walked the listing index and
 * fetched every event to test its title: either way a page of a term in 0.65% of 1M titles
 * read about 6,500-7,800 rows for 50. This GiST index holds the team, calendar, start and
 * trigrams of the text searched, so one nearest-first walk (`date_start <-> …`) tests the
 * term in the index and stops after the page. The trigram signature of an inner page is
 * 256 bytes (the default, 12, fills up and prunes nothing): a term in few events then skips
 * most of the index instead of testing all of it. It replaces the two GIN indexes, which
 * the search no longer reads.
 *
 * The planner reads the walk as cheap when it expects many matches and reads the matches
 * from the same index (a bitmap, then a sort) when it expects few; it can only tell them
 * apart with statistics of the searched text itself. A partial index's own are not used,
 * hence the extended statistics (a histogram of 1000 values, as 0021 gives the columns).
 * A table that already holds events is analyzed here so the page is right from the start;
 * an empty or small one is left to autovacuum (see 0021 for why not an empty one).
 *
 * Built CONCURRENTLY, outside a transaction, so that events can still be written while it
 * builds (about 20-30 s per million events, two cores); a build that was cut short leaves
 * an invalid index, which the next run drops and builds again.
 */
export const config = { transaction: false };

const CREATE = `CREATE INDEX CONCURRENTLY events_search ON events USING gist
  (team_id, calendar_id, date_start, (title || E'\\n' || coalesce(internal_name, '')) gist_trgm_ops (siglen = 256))
  WHERE deleted_at IS NULL`;

const STATISTICS = [
  "CREATE STATISTICS IF NOT EXISTS events_search_text ON ((title || E'\\n' || coalesce(internal_name, ''))) FROM events",
  'ALTER STATISTICS events_search_text SET STATISTICS 1000',
];

/** Events enough for a sample to tell what a search finds. */
const ANALYZE_FROM_EVENTS = 10_000;

export async function up(knex: Knex): Promise<void> {
  await unbounded(knex, [
    'DROP INDEX CONCURRENTLY IF EXISTS events_search',
    CREATE,
    'DROP INDEX CONCURRENTLY IF EXISTS events_title_trgm',
    'DROP INDEX CONCURRENTLY IF EXISTS events_internal_name_trgm',
    ...STATISTICS,
  ]);
  const { rows } = await knex.raw('SELECT count(*)::int AS n FROM (SELECT 1 FROM events LIMIT ?) AS sample', [ANALYZE_FROM_EVENTS]);
  if (rows[0].n >= ANALYZE_FROM_EVENTS) await unbounded(knex, ['ANALYZE events']);
}

export async function down(knex: Knex): Promise<void> {
  await unbounded(knex, [
    'CREATE INDEX CONCURRENTLY IF NOT EXISTS events_title_trgm ON events USING gin (title gin_trgm_ops) WHERE deleted_at IS NULL',
    'CREATE INDEX CONCURRENTLY IF NOT EXISTS events_internal_name_trgm ON events USING gin (internal_name gin_trgm_ops) WHERE deleted_at IS NULL AND internal_name IS NOT NULL',
    'DROP INDEX CONCURRENTLY IF EXISTS events_search',
    'DROP STATISTICS IF EXISTS events_search_text',
  ]);
}
