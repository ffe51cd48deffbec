import type { Knex } from 'knex';

/**
 * A webhook message's body as the text that is sent. Messages were stored as jsonb, which
 * Postgres re-encodes (keys reordered, spaces added): every attempt then parsed the stored
 * value and wrote it out again, costing the webhook worker time in proportion to the event
 * (a description of 50,000 characters, per attempt). Now the text is stored as the gateway
 * wrote it (`{"type","timestamp","data"}`, compact) and sent as it is. Messages recorded
 * before keep their jsonb payload and are sent as before.
 *
 * Each step only changes the catalog (the check is not validated against existing rows):
 * no rewrite of the outbox, the lock held a moment.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_messages ADD COLUMN body text');
  await knex.raw('ALTER TABLE webhook_messages ALTER COLUMN payload DROP NOT NULL');
  await knex.raw('ALTER TABLE webhook_messages ADD CONSTRAINT webhook_messages_body_or_payload CHECK (body IS NOT NULL OR payload IS NOT NULL) NOT VALID');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_messages DROP CONSTRAINT webhook_messages_body_or_payload');
  await knex.raw('UPDATE webhook_messages SET payload = body::jsonb WHERE payload IS NULL');
  await knex.raw('ALTER TABLE webhook_messages ALTER COLUMN payload SET NOT NULL');
  await knex.raw('ALTER TABLE webhook_messages DROP COLUMN body');
}
