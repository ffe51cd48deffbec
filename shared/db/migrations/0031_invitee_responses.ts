import type { Knex } from 'knex';

/**
 * What each invitee answered from their calendar app (an iTIP REPLY received by the
 * inbound-mail service) or from the buttons of their email: `response` is accepted,
 * declined or tentative (null: no answer yet), `responded_at` when it arrived, and
 * `response_sequence` the SEQUENCE of the invitation or update it answered (whether that is
 * older than the newest one the invitee was sent, a stale answer, is read from their
 * deliveries, not stored).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE invitees
    ADD COLUMN response text CHECK (response IN ('accepted', 'declined', 'tentative')),
    ADD COLUMN responded_at timestamptz,
    ADD COLUMN response_sequence integer`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE invitees
    DROP COLUMN response, DROP COLUMN responded_at, DROP COLUMN response_sequence`);
}
