import type { Knex } from 'knex';

/**
 * Finished extractions (the text someone sent, and its result) are deleted once older than
 * EXTRACTION_RETENTION_DAYS; a BRIN index on `created_at` finds them (see 0015).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX extractions_created_brin ON extractions USING brin (created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX extractions_created_brin');
}
