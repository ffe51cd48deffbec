import type { Knex } from 'knex';

/**
 * The language a calendar's public pages use for a visitor whose browser names none we have
 * (`?lang=` and Accept-Language come first). Null: English.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE calendars ADD COLUMN locale text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE calendars DROP COLUMN locale');
}
