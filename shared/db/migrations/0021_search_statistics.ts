import type { Knex } from 'knex';

/**
 * A `search` listing (`title`/`internal_name` ILIKE '%term%', ordered by date_start) is
 * planned either as a walk of the team's ordered listing index, filtering as it goes (fast
 * when the term is common), or as a trigram-index lookup of the matches, then a top-50 sort
 * (fast when it is rare). The planner picks by the term's estimated share of rows, which for
 * a '%term%' pattern it reads off the column's histogram. At the default statistics target
 * (100 buckets) a term in one row of a thousand reads as 0% or 1% depending on which rows
 * ANALYZE sampled; at 1% it walks the index and examines every row of the team's listing
 * before it has its 50, an order of magnitude slower than the lookup (`npm run bench -- api`). A
 * histogram of 1000 buckets sees shares down to about 0.1%, so rare terms take the index.
 * The next ANALYZE (autovacuum's) builds it. Not run here: on a new, empty database it
 * would record `events` as analyzed and empty, and plans made then (the foreign-key
 * checks of the smart-link worker's inserts among them, cached per connection) would scan
 * the table instead of its index as it fills.
 */
const COLUMNS = ['title', 'internal_name'];

export async function up(knex: Knex): Promise<void> {
  for (const column of COLUMNS) await knex.raw('ALTER TABLE events ALTER COLUMN ?? SET STATISTICS 1000', [column]);
}

export async function down(knex: Knex): Promise<void> {
  for (const column of COLUMNS) await knex.raw('ALTER TABLE events ALTER COLUMN ?? SET STATISTICS -1', [column]);
}
