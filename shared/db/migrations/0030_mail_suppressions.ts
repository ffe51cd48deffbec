import type { Knex } from 'knex';

/**
 * Addresses a team's email is not sent to again: those whose server refused a message for
 * good (a 5xx reply). A message to one is recorded as skipped, not sent and not counted
 * against the quota. The team lifts one through the API. Keyed by the address in lower case.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE mail_suppressions (
    team_id bigint NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    email text NOT NULL,
    reason text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, email)
  )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE mail_suppressions');
}
