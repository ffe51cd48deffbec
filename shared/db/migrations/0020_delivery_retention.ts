import type { Knex } from 'knex';

/**
 * Email delivery records are deleted once their event is over DELIVERY_RETENTION_DAYS ago.
 * A BRIN index on `created_at` finds the old ones (rows arrive in time order), at next to
 * no cost to the fan-outs that insert them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX deliveries_created_brin ON deliveries USING brin (created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX deliveries_created_brin');
}
