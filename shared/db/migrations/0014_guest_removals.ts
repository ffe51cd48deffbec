import type { Knex } from 'knex';

/**
 * Taking one person off an event (an invitee removed, an RSVP deleted by the organizer)
 * is its own kind of message, `removal`: a METHOD:CANCEL for that attendee alone, without
 * STATUS:CANCELLED (RFC 5546 §3.2.5: the event itself goes on), and a text that says so.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE deliveries
      DROP CONSTRAINT deliveries_kind_check,
      ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('invitation', 'update', 'cancellation', 'removal', 'rsvp_yes', 'rsvp_maybe', 'rsvp_no'))
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("UPDATE deliveries SET kind = 'cancellation' WHERE kind = 'removal'");
  await knex.raw(`
    ALTER TABLE deliveries
      DROP CONSTRAINT deliveries_kind_check,
      ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('invitation', 'update', 'cancellation', 'rsvp_yes', 'rsvp_maybe', 'rsvp_no'))
  `);
}
