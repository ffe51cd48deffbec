import type { Knex } from 'knex';

/**
 * Who organizes a calendar's events: the ORGANIZER of its invitations, whom calendar apps
 * send an invitee's Accept or Decline to, and the Reply-To of its emails. Null: the team's
 * owner (its first user).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE calendars ADD COLUMN organizer_name text, ADD COLUMN organizer_email text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE calendars DROP COLUMN organizer_name, DROP COLUMN organizer_email');
}
