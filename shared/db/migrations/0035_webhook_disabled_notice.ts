import type { Knex } from 'knex';

/**
 * When the team's admins were emailed that the service turned a webhook off (null: not yet,
 * or it is on). A notice job run again after that sends nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhooks ADD COLUMN disabled_notified_at timestamptz');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhooks DROP COLUMN disabled_notified_at');
}
