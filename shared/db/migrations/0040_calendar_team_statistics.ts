import type { Knex } from 'knex';
import { unbounded } from './unbounded';

/**
 * A calendar belongs to one team, but the planner takes `team_id = …` and `calendar_id = …`
 * for independent filters and multiplies their shares. In a database that also holds large
 * calendars, a team with one calendar of 10,000 events among 1.1 million was estimated at
 * 84 rows: a calendar's first page then read all 10,000 through the search index and sorted
 * them (5 ms) instead of walking the listing index for 51 (0.05 ms), and its list ran at
 * half the rate of a calendar of a million events. Functional-dependency statistics tell
 * the planner that the calendar decides the team. A table that already holds events is
 * analyzed so the estimate is right from the start (see 0024); a small one is left to
 * autovacuum.
 */
export const config = { transaction: false };

const ANALYZE_FROM_EVENTS = 10_000;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE STATISTICS IF NOT EXISTS events_calendar_team (dependencies) ON calendar_id, team_id FROM events');
  const { rows } = await knex.raw('SELECT count(*)::int AS n FROM (SELECT 1 FROM events LIMIT ?) AS sample', [ANALYZE_FROM_EVENTS]);
  if (rows[0].n >= ANALYZE_FROM_EVENTS) await unbounded(knex, ['ANALYZE events']);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP STATISTICS IF EXISTS events_calendar_team');
}
