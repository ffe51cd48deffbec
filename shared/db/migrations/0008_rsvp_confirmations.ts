import type { Knex } from 'knex';

/**
 * RSVP confirmations go through the mail worker like invitations: a delivery row per
 * message, of kind `rsvp_yes` or `rsvp_maybe` (the answer is in the kind, so a person who
 * answers yes, then maybe, then yes again at the same SEQUENCE gets one confirmation of
 * each, not a third). `rsvp_id` ties the row to the answer it confirms.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE deliveries
      DROP CONSTRAINT deliveries_kind_check,
      ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('invitation', 'update', 'cancellation', 'rsvp_yes', 'rsvp_maybe')),
      ADD COLUMN rsvp_id bigint NULL REFERENCES rsvps(id) ON DELETE SET NULL
  `);
  await knex.raw('CREATE INDEX deliveries_rsvp ON deliveries (rsvp_id) WHERE rsvp_id IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("DELETE FROM deliveries WHERE kind IN ('rsvp_yes', 'rsvp_maybe')");
  await knex.raw(`
    ALTER TABLE deliveries
      DROP COLUMN rsvp_id,
      DROP CONSTRAINT deliveries_kind_check,
      ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('invitation', 'update', 'cancellation'))
  `);
}
