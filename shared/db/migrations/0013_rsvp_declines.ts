import type { Knex } from 'knex';

/**
 * A yes or maybe changed to no is answered with a cancellation to that person (kind
 * `rsvp_no`, METHOD:CANCEL): their confirmation had put the event in their calendar.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE deliveries
      DROP CONSTRAINT deliveries_kind_check,
      ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('invitation', 'update', 'cancellation', 'rsvp_yes', 'rsvp_maybe', 'rsvp_no'))
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("DELETE FROM deliveries WHERE kind = 'rsvp_no'");
  await knex.raw(`
    ALTER TABLE deliveries
      DROP CONSTRAINT deliveries_kind_check,
      ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('invitation', 'update', 'cancellation', 'rsvp_yes', 'rsvp_maybe'))
  `);
}
