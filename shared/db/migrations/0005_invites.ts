import type { Knex } from 'knex';

/**
 * Invitees of an event and the emails sent to them.
 *
 * A delivery row is one message: (event, invitee email, kind, sequence) is unique, so a
 * re-run job or a repeated fan-out can never make a second message for the same change.
 * The row is also the mail worker's idempotency record: it is claimed (claim_token,
 * claimed_at, attempts + 1) before the message goes to SMTP and marked sent after the
 * server accepted it. Deliveries outlive their invitee (a cancellation is sent to someone
 * who was just removed) and their event (events are soft-deleted).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('invitees', (t) => {
    t.bigIncrements('id');
    t.text('uid').notNullable().unique();
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.bigInteger('event_id').notNullable().references('events.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('name').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE UNIQUE INDEX invitees_event_email ON invitees (event_id, lower(email))');
  await knex.raw('CREATE INDEX invitees_event_listing ON invitees (event_id, id)');

  await knex.schema.createTable('deliveries', (t) => {
    t.bigIncrements('id');
    t.bigInteger('team_id').notNullable().references('teams.id').onDelete('CASCADE');
    t.bigInteger('event_id').notNullable().references('events.id').onDelete('CASCADE');
    t.bigInteger('invitee_id').nullable().references('invitees.id').onDelete('SET NULL');
    t.text('email').notNullable();
    t.text('kind').notNullable();
    t.integer('sequence').notNullable();
    t.text('status').notNullable().defaultTo('queued');
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('error').nullable(); // the SMTP server's reply (or the connection error) of the last failure
    t.text('message_id').nullable();
    t.text('claim_token').nullable(); // who is sending it right now (null: nobody)
    t.timestamp('claimed_at', { useTz: true }).nullable();
    t.timestamp('sent_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`
    ALTER TABLE deliveries
      ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('invitation', 'update', 'cancellation')),
      ADD CONSTRAINT deliveries_status_check CHECK (status IN ('queued', 'sent', 'failed'))
  `);
  await knex.raw('CREATE UNIQUE INDEX deliveries_message ON deliveries (event_id, lower(email), kind, sequence)');
  // An invitee's last delivery (the invites listing).
  await knex.raw('CREATE INDEX deliveries_invitee_last ON deliveries (invitee_id, id DESC) WHERE invitee_id IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('deliveries');
  await knex.schema.dropTableIfExists('invitees');
}
