import type { Knex } from 'knex';

/**
 * A message of kind `rsvp_link`: an address whose answer someone tried to change without
 * the answer's key is sent its link for changing it (the answer itself stays), at most one
 * an hour; such a row's `sequence` numbers the links sent to the address (no calendar part).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE deliveries
      DROP CONSTRAINT deliveries_kind_check,
      ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('invitation', 'update', 'cancellation', 'removal', 'rsvp_yes', 'rsvp_maybe', 'rsvp_no', 'rsvp_link'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("DELETE FROM deliveries WHERE kind = 'rsvp_link'");
  await knex.raw(`
    ALTER TABLE deliveries
      DROP CONSTRAINT deliveries_kind_check,
      ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('invitation', 'update', 'cancellation', 'removal', 'rsvp_yes', 'rsvp_maybe', 'rsvp_no'))`);
}
