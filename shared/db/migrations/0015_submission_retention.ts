import type { Knex } from 'knex';

/**
 * Submission records are deleted once older than SUBMISSION_RETENTION_DAYS. A BRIN index
 * on `received_at` finds the old ones: rows arrive in time order, so it stays a few pages
 * however large the table grows, and costs the hot insert path next to nothing (a btree
 * would add an index entry per submission).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX smart_link_submissions_received_brin ON smart_link_submissions USING brin (received_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX smart_link_submissions_received_brin');
}
