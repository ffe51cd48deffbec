import type { Knex } from 'knex';

/**
 * API tokens get a public id (`tok_…`), so an operator (and later the dashboard) can list a
 * team's tokens and revoke one without holding its secret. Tokens made before get a random
 * one of the same form (hex is a subset of the uid alphabet).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE api_tokens ADD COLUMN uid text');
  await knex.raw("UPDATE api_tokens SET uid = substr(md5(random()::text || clock_timestamp()::text || id::text), 1, 16)");
  await knex.raw('ALTER TABLE api_tokens ALTER COLUMN uid SET NOT NULL');
  await knex.raw('CREATE UNIQUE INDEX api_tokens_uid ON api_tokens (uid)');
  // A team's tokens, newest first.
  await knex.raw('CREATE INDEX api_tokens_team ON api_tokens (team_id, id DESC)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX api_tokens_team');
  await knex.raw('ALTER TABLE api_tokens DROP COLUMN uid');
}
