import type { Knex } from 'knex';

/**
 * Request limits per plan, per minute (null: no limit), beside the monthly event limit:
 * API requests per token and per team, extractions per team, submissions per smart link.
 * Edit the rows (or add plans) to change them; gateways pick a change up within a minute.
 */
export const PLAN_RATE_LIMITS = {
  free: { api_per_minute_token: 60, api_per_minute_team: 120, extractions_per_minute: 10, smart_link_per_minute: 60 },
  pro: { api_per_minute_token: 600, api_per_minute_team: 1200, extractions_per_minute: 60, smart_link_per_minute: 600 },
  business: { api_per_minute_token: 3000, api_per_minute_team: 6000, extractions_per_minute: 300, smart_link_per_minute: 6000 },
  unlimited: { api_per_minute_token: null, api_per_minute_team: null, extractions_per_minute: null, smart_link_per_minute: null },
} as const;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('plans', (t) => {
    t.integer('api_per_minute_token').nullable();
    t.integer('api_per_minute_team').nullable();
    t.integer('extractions_per_minute').nullable();
    t.integer('smart_link_per_minute').nullable();
  });
  for (const [id, limits] of Object.entries(PLAN_RATE_LIMITS)) await knex('plans').where({ id }).update(limits);
  await knex.raw(`
    ALTER TABLE plans ADD CONSTRAINT plans_rate_limits_check CHECK (
      coalesce(api_per_minute_token, 1) > 0 AND coalesce(api_per_minute_team, 1) > 0
      AND coalesce(extractions_per_minute, 1) > 0 AND coalesce(smart_link_per_minute, 1) > 0)
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('plans', (t) => {
    t.dropChecks(['plans_rate_limits_check']);
    t.dropColumns('api_per_minute_token', 'api_per_minute_team', 'extractions_per_minute', 'smart_link_per_minute');
  });
}
