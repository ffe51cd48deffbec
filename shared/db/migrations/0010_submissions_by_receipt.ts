import type { Knex } from 'knex';

/** A link's submissions are listed by receipt time (then id), newest first. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX smart_link_submissions_received ON smart_link_submissions (smart_link_id, received_at DESC, id DESC)');
  await knex.raw('DROP INDEX smart_link_submissions_link');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX smart_link_submissions_link ON smart_link_submissions (smart_link_id, id DESC)');
  await knex.raw('DROP INDEX smart_link_submissions_received');
}
